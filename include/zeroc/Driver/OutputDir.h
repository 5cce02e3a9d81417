//===- OutputDir.h - zeroc compile's output folder, replaced as one unit -===//
//
// `zeroc compile -o OUT` builds everything in a new sibling folder
// `.OUT.zeroc-tmp-HOST-PID-XXXXXX` and, when all of it succeeded, swaps it
// in with one rename (renameat2 RENAME_EXCHANGE where the filesystem has
// it): a reader sees the old output or the new one, never a mix, and two
// compiles into one folder leave one of them whole. A failed compile leaves
// no folder behind, not even an empty OUT or the parents it created.
// Staging folders of compiles that died are removed by the next compile
// into the same parent; nothing is ever removed through a symbolic link.
//
// Where OUT cannot be swapped (a mount point, a parent zeroc may not write)
// the staging folder lives inside OUT and the files are renamed one by
// one, `train` last; model.bin's checksum then keeps a trainer from running
// with another build's weights.
//
//===----------------------------------------------------------------------===//
#ifndef ZEROC_DRIVER_OUTPUTDIR_H
#define ZEROC_DRIVER_OUTPUTDIR_H

#include <string>
#include <vector>

namespace zeroc {

/// The files zeroc writes into OUT.
namespace outfile {
inline constexpr const char *kTrain = "train";
inline constexpr const char *kSource = "train.cpp";
/// --target cuda's program (instead of train.cpp).
inline constexpr const char *kCudaSource = "train.cu";
inline constexpr const char *kBlob = "model.bin";
inline constexpr const char *kPlan = "plan.json";
inline constexpr const char *kCompileLog = "compile.log";
} // namespace outfile

/// Every name zeroc may leave in OUT, in the order a file-by-file replace
/// renames them (`train` last); an existing OUT may hold nothing else.
const std::vector<std::string> &outputFileNames();

class StagedOutput {
public:
  explicit StagedOutput(std::string outDir);
  /// Removes the staging folder (and the parent folders it created) unless
  /// commit() succeeded.
  ~StagedOutput();
  StagedOutput(const StagedOutput &) = delete;
  StagedOutput &operator=(const StagedOutput &) = delete;

  /// Checks that OUT can be replaced: absent, or a directory (not a link)
  /// that holds only zeroc's outputs. Cheap; run it before compiling.
  bool checkTarget(std::string &error) const;
  /// Removes stale staging folders, then creates this compile's.
  bool create(std::string &error);
  /// The staging folder's path (valid after create()).
  const std::string &path() const { return staging; }
  /// Puts the staging folder's files in place as OUT.
  bool commit(std::string &error);

private:
  bool swapIn(std::string &error);
  bool renameFilesIn(std::string &error);
  std::string outDir, parent, base, staging;
  std::vector<std::string> createdParents;
  bool inPlace = false; ///< staging inside OUT (it cannot be swapped)
  bool committed = false;
};

/// Whether `inner` is `outer` or lies below it (both resolved through the
/// symbolic links that exist).
bool pathWithin(const std::string &inner, const std::string &outer);

/// Removes `path` and everything below it without following symbolic
/// links (a link is removed, not its target).
void removeTree(const std::string &path);

} // namespace zeroc

#endif // ZEROC_DRIVER_OUTPUTDIR_H
