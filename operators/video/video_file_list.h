// The files readers.video serves, with labels and optional frame ranges, from one of three
// sources (DALI's arguments):
//
// | argument  | what it lists                                                  | labels           |
// |-----------|----------------------------------------------------------------|------------------|
// | filenames | the given paths (relative to the YAML file)                    | `labels`, or the |
// |           |                                                                | file's index     |
// | file_root | every file matching file_filters under each subfolder, sorted  | sorted subfolder |
// |           | (readers.file's rule, dataset.h)                               | index            |
// | file_list | `path label [start [end]]` per line, whitespace-separated      | the line's       |
// |           | (paths relative to the list; no spaces in them, as in DALI);   |                  |
// |           | blank lines and lines starting with # skipped                  |                  |
//
// A file_list range selects the frames clips are cut from: [start, end) in seconds from the
// file's first frame, or in frame numbers with file_list_frame_num (a negative number counts from
// the end, Python's way: -1 is the last frame; 2.5 rounds up as a start, down as an end). Without
// end the range runs to the file's end; without start it is the whole file. A line may name a
// file more than once (several ranges, several labels).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace conveyor::ops::video {

struct VideoFileEntry {
  std::string path;
  int32_t label = 0;
  std::optional<double> start, end;  // file_list's range, as written
  int line = 0;                      // file_list's line (messages), 0 otherwise
};

// Throws InvalidArgument naming `where`, the list and the line: a missing label, a label that is
// not an int32, a start or end that is not a number, more than four fields.
std::vector<VideoFileEntry> ParseVideoFileList(const std::string& list_path, const std::string& where);

}  // namespace conveyor::ops::video
