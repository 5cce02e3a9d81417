//===- OutputDir.cpp - zeroc compile's output folder, replaced as one unit ===//
#include "zeroc/Driver/OutputDir.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zeroc {

namespace {

constexpr const char *kStagingTag = ".zeroc-tmp-";

std::string quoted(const std::string &path) { return "'" + path + "'"; }

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

/// Whether process `pid` still runs (a staging folder it owns is live).
bool processAlive(long pid) {
  return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

/// The pid in a staging folder's name `prefix<digits>`, or 0.
long stagingPid(llvm::StringRef name, llvm::StringRef prefix) {
  if (!name.consume_front(prefix) || name.empty() ||
      !std::all_of(name.begin(), name.end(),
                   [](char c) { return c >= '0' && c <= '9'; }) ||
      name.size() > 9)
    return 0;
  return std::strtol(name.str().c_str(), nullptr, 10);
}

/// Swaps two existing paths atomically; ENOSYS/EINVAL where the kernel or
/// the filesystem cannot.
int exchangePaths(const std::string &a, const std::string &b) {
  return ::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE);
}

} // namespace

const std::vector<std::string> &outputFileNames() {
  static const std::vector<std::string> names = {"train", "train.cpp",
                                                 "model.bin", "plan.json"};
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
    llvm::sys::fs::remove_directories(staging);
  for (auto it = createdParents.rbegin(); it != createdParents.rend(); ++it)
    ::rmdir(it->c_str());
}

bool StagedOutput::checkTarget(std::string &error) const {
  if (base.empty() || base == "." || base == ".." || outDir == "/") {
    error = "cannot use " + quoted(outDir) +
            " as the output directory: give a folder of its own (-o DIR)";
    return false;
  }
  struct stat st;
  if (::lstat(outDir.c_str(), &st) != 0)
    return errno == ENOENT ? true
                           : (error = "cannot use output directory " +
                                      quoted(outDir) + ": " +
                                      std::strerror(errno),
                              false);
  if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
    error = "output directory " + quoted(outDir) + " is " +
            (S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory") +
            "; zeroc replaces the whole folder: give another -o";
    return false;
  }
  std::vector<std::string> names;
  if (!listDirectory(outDir, names)) {
    error = "cannot read output directory " + quoted(outDir) + ": " +
            std::strerror(errno);
    return false;
  }
  const std::vector<std::string> &ours = outputFileNames();
  for (const std::string &name : names) {
    bool zerocs = std::find(ours.begin(), ours.end(), name) != ours.end() ||
                  name == "compile.log" ||
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

void StagedOutput::removeStale() const {
  std::vector<std::string> names;
  if (!listDirectory(parent, names))
    return;
  for (const std::string &name : names) {
    for (const char *kind : {".zeroc-tmp-", ".zeroc-old-"}) {
      long pid = stagingPid(name, "." + base + kind);
      if (pid && !processAlive(pid))
        llvm::sys::fs::remove_directories(parent + "/" + name);
    }
  }
}

bool StagedOutput::create(std::string &error) {
  // Parent folders that do not exist yet, outermost first, so that a failed
  // compile can remove exactly those.
  std::vector<std::string> missing;
  for (llvm::StringRef p = parent; !p.empty() && !llvm::sys::fs::exists(p);
       p = llvm::sys::path::parent_path(p))
    missing.push_back(p.str());
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0777) != 0 && errno != EEXIST) {
      error = "cannot create " + quoted(*it) + ": " + std::strerror(errno);
      return false;
    }
    createdParents.push_back(*it);
  }
  removeStale();
  std::string candidate =
      parent + "/." + base + kStagingTag + std::to_string(::getpid());
  llvm::sys::fs::remove_directories(candidate);
  if (::mkdir(candidate.c_str(), 0777) != 0) {
    error = "cannot create " + quoted(candidate) + ": " + std::strerror(errno);
    return false;
  }
  staging = candidate;
  return true;
}

bool StagedOutput::commit(std::string &error) {
  if (!checkTarget(error))
    return false;
  // A new OUT: one rename. An existing one: one atomic exchange, then the
  // old output (now at the staging path) goes.
  if (::rename(staging.c_str(), outDir.c_str()) == 0) {
    committed = true;
    return true;
  }
  if (errno != EEXIST && errno != ENOTEMPTY && errno != EISDIR) {
    error = "cannot move " + quoted(staging) + " to " + quoted(outDir) + ": " +
            std::strerror(errno);
    return false;
  }
  if (exchangePaths(staging, outDir) != 0) {
    if (errno != ENOSYS && errno != EINVAL) {
      error = "cannot replace " + quoted(outDir) + ": " + std::strerror(errno);
      return false;
    }
    // No atomic exchange here: move the old output aside first.
    std::string old =
        parent + "/." + base + ".zeroc-old-" + std::to_string(::getpid());
    llvm::sys::fs::remove_directories(old);
    if (::rename(outDir.c_str(), old.c_str()) != 0 ||
        ::rename(staging.c_str(), outDir.c_str()) != 0) {
      error = "cannot replace " + quoted(outDir) + ": " + std::strerror(errno);
      return false;
    }
    llvm::sys::fs::remove_directories(old);
    committed = true;
    return true;
  }
  committed = true;
  llvm::sys::fs::remove_directories(staging); // the old output
  return true;
}

} // namespace zeroc
