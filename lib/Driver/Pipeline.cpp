//===- Pipeline.cpp - zeroc's phases and IR dumps -------------------------===//
#include "zeroc/Driver/Pipeline.h"

#include "zeroc/Driver/DsConfig.h"
#include "zeroc/Support/WriteAll.h"

#include "zeroc/Passes/Passes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseSet.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;

namespace zeroc {

/// A phase's IR as --dump-ir writes it. Weights (dense_resource blobs of
/// kDumpResourceBytes and more, GraphBuilder::initializerValue) are printed
/// as empty blobs: a dump of a 1.5 B-parameter model stays a few hundred
/// KB, and printing it never reads the weights (MLIR's own
/// elideLargeResourceString formats each blob in hex first).
static std::string printModule(ModuleOp module) {
  std::vector<std::pair<DialectResourceBlobManager::BlobEntry *,
                        AsmResourceBlob>>
      hidden;
  llvm::DenseSet<void *> seen;
  module->walk([&](Operation *op) {
    for (NamedAttribute a : op->getAttrs()) {
      auto res = llvm::dyn_cast<DenseResourceElementsAttr>(a.getValue());
      if (!res)
        continue;
      auto *entry = res.getRawHandle().getResource();
      AsmResourceBlob *blob = entry ? entry->getBlob() : nullptr;
      if (!blob || blob->getData().size() < size_t(kDumpResourceBytes) ||
          !seen.insert(entry).second)
        continue;
      hidden.emplace_back(entry, std::move(*blob));
      entry->setBlob(AsmResourceBlob());
    }
  });
  std::string text;
  llvm::raw_string_ostream os(text);
  if (!hidden.empty())
    os << "// " << hidden.size() << " weight blobs of " << kDumpResourceBytes
       << " bytes or more are printed empty\n";
  module.print(os, OpPrintingFlags().enableDebugInfo(true, /*pretty=*/false));
  for (auto &[entry, blob] : hidden)
    entry->setBlob(std::move(blob));
  return text;
}

bool runPhases(ModuleOp module, const std::vector<Phase> &phases,
               const std::string &dumpDir, std::string &error) {
  std::vector<std::pair<std::string, std::string>> dumps;
  auto record = [&](int index, const std::string &name) {
    if (dumpDir.empty())
      return;
    char prefix[16];
    std::snprintf(prefix, sizeof(prefix), "%02d-", index);
    dumps.emplace_back(prefix + name + ".mlir", printModule(module));
  };
  record(0, "import");

  std::string diag;
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    if (d.getSeverity() != DiagnosticSeverity::Error || !diag.empty())
      return success();
    std::string loc;
    llvm::raw_string_ostream os(loc);
    d.getLocation().print(os);
    diag = d.str() + " at " + os.str();
    return success();
  });
  for (size_t i = 0; i < phases.size(); ++i) {
    PassManager pm(module.getContext());
    phases[i].build(pm);
    if (failed(pm.run(module))) {
      error = "phase '" + phases[i].name + "' failed: " +
              (diag.empty() ? std::string("unknown error") : diag);
      return false;
    }
    record(static_cast<int>(i) + 1, phases[i].name);
  }

  if (dumpDir.empty())
    return true;
  if (std::error_code ec = llvm::sys::fs::create_directories(dumpDir)) {
    error = "cannot create --dump-ir directory '" + dumpDir + "': " + ec.message();
    return false;
  }
  for (const auto &[file, text] : dumps) {
    llvm::SmallString<256> path(dumpDir);
    llvm::sys::path::append(path, file);
    if (!writeFileAtomically(std::string(path), text, error))
      return false;
  }
  return true;
}

bool writeFileAtomically(const std::string &path, const std::string &text,
                         std::string &error) {
  return writeFileAtomically(
      path,
      [&](int fd, std::string &why) {
        return writeAll(fd, text.data(), text.size(), why);
      },
      error);
}

bool writeFileAtomically(const std::string &path,
                         llvm::function_ref<bool(int fd, std::string &why)> write,
                         std::string &error) {
  // The rename below replaces whatever is at `path`: refuse to replace a
  // device, a FIFO, a directory or a symbolic link with a regular file.
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    error = "cannot write '" + messagePath(path) + "': it is " +
            (S_ISLNK(st.st_mode)   ? "a symbolic link"
             : S_ISDIR(st.st_mode) ? "a directory"
                                   : "not a regular file") +
            ", which zeroc would replace; give a regular file's path";
    return false;
  }
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = "cannot write '" + messagePath(path) + "': " + std::strerror(errno);
    return false;
  }
  std::string why;
  bool ok = write(fd, why);
  if (::close(fd) != 0 && ok) {
    ok = false;
    why = std::strerror(errno);
  }
  if (!ok) {
    error = "cannot write '" + messagePath(path) + "': " + why;
    llvm::sys::fs::remove(tmp);
    return false;
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    error = "cannot write '" + messagePath(path) + "': " + ec.message();
    return false;
  }
  return true;
}

} // namespace zeroc
