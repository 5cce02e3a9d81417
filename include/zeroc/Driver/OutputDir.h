//===- OutputDir.h - zeroc compile's output folder, replaced as one unit -===//
//
// `zeroc compile -o OUT` builds everything in a new sibling folder
// OUT's-parent/.OUT.zeroc-tmp-PID and, when all of it succeeded, swaps it
// in with one rename (renameat2 RENAME_EXCHANGE where the filesystem has
// it): a reader sees the old output or the new one, never a mix, and two
// compiles into one folder leave one of them whole. A failed compile leaves
// no folder behind, not even an empty OUT. Staging folders of compiles that
// died are removed by the next compile into the same parent.
//
//===----------------------------------------------------------------------===//
#ifndef ZEROC_DRIVER_OUTPUTDIR_H
#define ZEROC_DRIVER_OUTPUTDIR_H

#include <string>
#include <vector>

namespace zeroc {

/// The files zeroc writes into OUT; an existing OUT may hold nothing else.
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
  /// Swaps the staging folder in as OUT and removes the old output.
  bool commit(std::string &error);

private:
  void removeStale() const;
  std::string outDir, parent, base, staging;
  std::vector<std::string> createdParents;
  bool committed = false;
};

} // namespace zeroc

#endif // ZEROC_DRIVER_OUTPUTDIR_H
