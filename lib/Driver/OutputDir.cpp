//===- OutputDir.cpp - zeroc compile's output folder, replaced as one unit ===//
#include "zeroc/Driver/OutputDir.h"

#include "zeroc/Driver/DsConfig.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zeroc {

namespace {

constexpr const char *kStagingTag = ".zeroc-tmp-";
constexpr const char *kOldTag = ".zeroc-old-";
/// A staging folder of another host is stale after this long.
constexpr time_t kForeignStaleSeconds = 24 * 3600;

std::string quoted(const std::string &path) {
  return "'" + messagePath(path) + "'";
}

std::string systemError(const std::string &what, const std::string &path) {
  return what + " " + quoted(path) + ": " + std::strerror(errno);
}

/// The entries of directory `dir` (without "." and ".."); false when it
/// cannot be read.
bool listDirectory(const std::string &dir, std::vector<std::string> &names) {
  DIR *d = ::opendir(dir.c_str());
  if (!d)
    return false;
  while (const dirent *e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..")
      names.push_back(name);
  }
  ::closedir(d);
  return true;
}

/// This host's name as it appears in staging folder names: [A-Za-z0-9_].
const std::string &hostTag() {
  static const std::string tag = [] {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0 || !*buf)
      std::snprintf(buf, sizeof buf, "host");
    std::string s = buf;
    for (char &c : s)
      if (!llvm::isAlnum(static_cast<unsigned char>(c)))
        c = '_';
    return s.substr(0, 64);
  }();
  return tag;
}

/// Whether process `pid` of this host still runs.
bool processAlive(long pid) {
  return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

/// Whether the staging folder `name` (".BASE" + tag + "HOST-PID-XXXXXX")
/// belongs to a compile that is gone: a dead process of this host, or a
/// folder of another host older than kForeignStaleSeconds.
bool isStale(llvm::StringRef name, llvm::StringRef prefix, const struct stat &st) {
  if (!name.consume_front(prefix))
    return false;
  size_t last = name.rfind('-');
  if (last == llvm::StringRef::npos)
    return false;
  llvm::StringRef hostPid = name.take_front(last);
  size_t dash = hostPid.rfind('-');
  if (dash == llvm::StringRef::npos)
    return false;
  llvm::StringRef host = hostPid.take_front(dash), pidText = hostPid.drop_front(dash + 1);
  long pid = 0;
  if (pidText.empty() || pidText.size() > 9 || pidText.getAsInteger(10, pid))
    return false;
  if (host == hostTag())
    return !processAlive(pid);
  return std::time(nullptr) - st.st_mtime > kForeignStaleSeconds;
}

int removeEntry(const char *path, const struct stat *, int type, struct FTW *) {
  if (type == FTW_DP)
    ::rmdir(path);
  else
    ::unlink(path);
  return 0;
}

/// A fresh, private directory named PREFIX + "HOST-PID-XXXXXX" in `dir`.
bool makeUniqueDir(const std::string &dir, const std::string &prefix,
                   std::string &out, std::string &error) {
  std::string tmpl = dir + "/" + prefix + hostTag() + "-" +
                     std::to_string(::getpid()) + "-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) {
    error = systemError("cannot create a folder in", dir);
    return false;
  }
  out = buf.data();
  // mkdtemp makes 0700; the output folder gets the usual 0777 & ~umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(out.c_str(), 0777 & ~mask);
  return true;
}

/// Whether OUT must be replaced file by file: it is a mount point (a rename
/// onto it fails), or its parent is not writable.
bool cannotSwap(const std::string &outDir, const std::string &parent) {
  struct stat out, par;
  if (::lstat(outDir.c_str(), &out) != 0 || !S_ISDIR(out.st_mode))
    return false;
  if (::stat(parent.c_str(), &par) != 0)
    return false;
  return out.st_dev != par.st_dev || ::access(parent.c_str(), W_OK) != 0;
}

/// `path` made absolute, through symbolic links as far as it exists.
std::string resolvedPath(const std::string &path) {
  llvm::SmallString<256> p(path);
  llvm::sys::fs::make_absolute(p);
  llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
  // Resolve the longest existing prefix, keep the rest as written.
  llvm::SmallString<256> head(p), real;
  std::string tail;
  while (!head.empty() && llvm::sys::fs::real_path(head, real)) {
    llvm::StringRef name = llvm::sys::path::filename(head);
    tail = "/" + name.str() + tail;
    llvm::StringRef parentPath = llvm::sys::path::parent_path(head);
    if (parentPath == head)
      break;
    head = parentPath;
  }
  if (head.empty())
    return p.str().str();
  return real.str().str() + tail;
}

/// Removes `dir`'s stale staging folders: real directories (never links)
/// of this user whose names carry `prefixes`.
void removeStaleIn(const std::string &dir,
                          const std::vector<std::string> &prefixes) {
  std::vector<std::string> names;
  if (!listDirectory(dir, names))
    return;
  for (const std::string &name : names) {
    std::string path = dir + "/" + name;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid != ::getuid())
      continue;
    for (const std::string &prefix : prefixes)
      if (isStale(name, prefix, st))
        removeTree(path);
  }
}

} // namespace

bool pathWithin(const std::string &inner, const std::string &outer) {
  std::string in = resolvedPath(inner), out = resolvedPath(outer);
  while (out.size() > 1 && out.back() == '/')
    out.pop_back();
  return in == out || (in.size() > out.size() &&
                       in.compare(0, out.size(), out) == 0 &&
                       (out == "/" || in[out.size()] == '/'));
}

void removeTree(const std::string &path) {
  ::nftw(path.c_str(), removeEntry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

const std::vector<std::string> &outputFileNames() {
  static const std::vector<std::string> names = {
      outfile::kCompileLog, outfile::kBlob,       outfile::kPlan,
      outfile::kSource,     outfile::kCudaSource, outfile::kTrain};
  return names;
}

StagedOutput::StagedOutput(std::string dir) : outDir(std::move(dir)) {
  while (outDir.size() > 1 && outDir.back() == '/')
    outDir.pop_back();
  parent = llvm::sys::path::parent_path(outDir).str();
  if (parent.empty())
    parent = ".";
  base = llvm::sys::path::filename(outDir).str();
}

StagedOutput::~StagedOutput() {
  if (committed)
    return;
  if (!staging.empty())
    removeTree(staging);
  for (auto it = createdParents.rbegin(); it != createdParents.rend(); ++it)
    ::rmdir(it->c_str());
}

bool StagedOutput::checkTarget(std::string &error) const {
  if (base.empty() || base == "." || base == ".." || outDir == "/") {
    error = "cannot use " + quoted(outDir) +
            " as the output directory: give a folder of its own (-o DIR)";
    return false;
  }
  char cwd[4096];
  if (::getcwd(cwd, sizeof cwd) && pathWithin(cwd, outDir)) {
    error = "output directory " + quoted(outDir) +
            " holds the current directory; zeroc replaces the whole folder: "
            "give another -o";
    return false;
  }
  struct stat st;
  if (::lstat(outDir.c_str(), &st) != 0) {
    if (errno == ENOENT)
      return true;
    error = systemError("cannot use output directory", outDir);
    return false;
  }
  if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
    error = "output directory " + quoted(outDir) + " is " +
            (S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory") +
            "; zeroc replaces the whole folder: give another -o";
    return false;
  }
  std::vector<std::string> names;
  if (!listDirectory(outDir, names)) {
    error = systemError("cannot read output directory", outDir);
    return false;
  }
  const std::vector<std::string> &ours = outputFileNames();
  for (const std::string &name : names) {
    bool zerocs = std::find(ours.begin(), ours.end(), name) != ours.end() ||
                  llvm::StringRef(name).starts_with(kStagingTag);
    if (!zerocs) {
      error = "output directory " + quoted(outDir) + " holds " +
              quoted(name) +
              ", which zeroc did not write; zeroc replaces the whole folder: "
              "move it away or give another -o";
      return false;
    }
  }
  return true;
}

bool StagedOutput::create(std::string &error) {
  // Parent folders that do not exist yet, outermost first, so that a failed
  // compile can remove exactly those.
  std::vector<std::string> missing;
  struct stat st;
  for (llvm::StringRef p = parent;
       !p.empty() && ::lstat(p.str().c_str(), &st) != 0;
       p = llvm::sys::path::parent_path(p))
    missing.push_back(p.str());
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0777) != 0 && errno != EEXIST) {
      error = systemError("cannot create", *it);
      return false;
    }
    createdParents.push_back(*it);
  }
  removeStaleIn(parent, {"." + base + kStagingTag, "." + base + kOldTag});
  inPlace = cannotSwap(outDir, parent);
  if (inPlace) {
    removeStaleIn(outDir, {kStagingTag});
    return makeUniqueDir(outDir, kStagingTag, staging, error);
  }
  return makeUniqueDir(parent, "." + base + kStagingTag, staging, error);
}

bool StagedOutput::commit(std::string &error) {
  if (!checkTarget(error))
    return false;
  if (inPlace ? renameFilesIn(error) : swapIn(error)) {
    committed = true;
    return true;
  }
  return false;
}

bool StagedOutput::renameFilesIn(std::string &error) {
  // `train` goes first and comes back last, so that no trainer runs while
  // the other files change; model.bin's checksum covers the rest.
  ::unlink((outDir + "/" + outfile::kTrain).c_str());
  for (const std::string &name : outputFileNames()) {
    std::string from = staging + "/" + name, to = outDir + "/" + name;
    if (::access(from.c_str(), F_OK) != 0) {
      ::unlink(to.c_str());
      continue;
    }
    if (::rename(from.c_str(), to.c_str()) != 0) {
      error = systemError("cannot move a file into", outDir);
      return false;
    }
  }
  removeTree(staging);
  return true;
}

bool StagedOutput::swapIn(std::string &error) {
  // A new OUT: one rename. An existing one: one atomic exchange, then the
  // old output (now at the staging path) goes.
  if (::rename(staging.c_str(), outDir.c_str()) == 0)
    return true;
  if (errno != EEXIST && errno != ENOTEMPTY && errno != EISDIR) {
    error = systemError("cannot move the output into", outDir);
    return false;
  }
  if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, outDir.c_str(),
                  RENAME_EXCHANGE) == 0) {
    removeTree(staging); // the old output; a link is removed, not followed
    return true;
  }
  if (errno != ENOSYS && errno != EINVAL) {
    error = systemError("cannot replace", outDir);
    return false;
  }
  // No atomic exchange on this filesystem (NFS, ...): move the old output
  // aside, and back if the new one cannot take its place.
  std::string old;
  if (!makeUniqueDir(parent, "." + base + kOldTag, old, error))
    return false;
  if (::rename(outDir.c_str(), old.c_str()) != 0) {
    error = systemError("cannot replace", outDir);
    ::rmdir(old.c_str());
    return false;
  }
  if (::rename(staging.c_str(), outDir.c_str()) != 0) {
    error = systemError("cannot replace", outDir);
    ::rename(old.c_str(), outDir.c_str());
    return false;
  }
  removeTree(old);
  return true;
}

} // namespace zeroc
