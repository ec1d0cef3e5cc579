// ClipList: every clip (file, first frame) readers.video can serve — its samples. A file with
// frames [begin, end) (the whole file, or a file_list range) holds clips starting at begin,
// begin + step, begin + 2 step, ... while the clip's last frame start + (sequence_length - 1) *
// stride is before end:
//
//   frames   0 1 2 3 4 5 6 7 8 9        sequence_length 3, stride 2, step 4
//   clip 0   x   x   x                  start 0: frames 0 2 4
//   clip 1           x   x   x          start 4: frames 4 6 8
//   (start 8 would need frame 12)
//
// Clips are numbered file after file, so clip c of the list is found by a binary search over the
// files' first clips (no per-clip storage: a million files of an hour each cost nothing extra).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "operators/video/clip_index.h"
#include "operators/video/video_file_list.h"

namespace conveyor::ops::video {

struct ClipParams {
  int64_t sequence_length = 1;
  int64_t stride = 1;
  int64_t step = 1;
  bool frame_num_ranges = false;  // file_list ranges in frame numbers (else seconds)
};

// The frames [begin, end) of `index` that `entry`'s range selects (file_list.h has the rules).
// Throws InvalidArgument naming the file and the line for a negative time.
std::pair<int64_t, int64_t> ResolveRange(const ClipIndex& index, const VideoFileEntry& entry, bool frame_num_ranges);

class ClipList {
 public:
  struct File {
    int64_t entry = 0;  // position in the reader's file entries
    std::shared_ptr<const ClipIndex> index;
    int64_t begin = 0, end = 0;  // the frames clips are cut from
    int64_t first_clip = 0, clips = 0;
  };
  struct Clip {
    const File* file = nullptr;
    int64_t start = 0;  // first frame
  };

  explicit ClipList(const ClipParams& params) : params_(params) {}

  // Adds the clips of file entry `entry`. Returns "" or, when no clip fits, why (the frames it
  // has against the span a clip needs), for the caller's error or skip.
  std::string Add(int64_t entry, std::shared_ptr<const ClipIndex> index, const VideoFileEntry& e);

  int64_t size() const { return size_; }
  Clip At(int64_t clip) const;
  // The frames of a clip that starts at `start`: start, start + stride, ...
  std::vector<int64_t> Frames(int64_t start) const;
  // Frames one clip spans, first to last inclusive.
  int64_t span() const { return (params_.sequence_length - 1) * params_.stride + 1; }
  const std::vector<File>& files() const { return files_; }
  const ClipParams& params() const { return params_; }
  // FNV-1a over every file's path, frame count and range and the clip parameters: a checkpoint of
  // another data set or clip shape is refused.
  uint64_t Fingerprint() const;

 private:
  ClipParams params_;
  std::vector<File> files_;
  int64_t size_ = 0;
};

}  // namespace conveyor::ops::video
