// ReadAhead: a reader's next batch of files, read whole on threads of its own while the pipeline
// works on the current batch (the readers' `read_ahead: true`). The reader's CPU stage then copies
// the batch from memory instead of opening, reading and closing 256 files on the pool that the
// GPU decoders' host phase also uses. Files are read one iteration early.
//
//   Setup k:   Take(batch k) -> its bytes (or false: the reader reads them itself, as without)
//              Start(batch k+1, peeked from the reader's core without advancing it)
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace conveyor::ops {

// Reads the file at `path` whole into `bytes`: "" when it did, else why not ("cannot open: ...",
// "cannot stat: ...", "not a regular file", "read failed: ...", "expected N bytes, the file ends
// after M"). Shared by the read ahead and the readers' sample checks (reader_op.cc).
std::string ReadWholeFile(const std::string& path, std::vector<uint8_t>& bytes);

class ReadAhead {
 public:
  // `paths`: the dataset's files by index (outlives this). `threads` >= 1 read in parallel.
  ReadAhead(const std::vector<std::string>& paths, int threads);
  ~ReadAhead();
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // Starts reading the files of dataset indices `batch` (once the read before has finished).
  void Start(std::vector<int64_t> batch);
  // Waits for the read started last. True when it was of exactly `batch` and read every file
  // whole (none empty): their bytes are swapped into `contents`, one per sample (the buffers given
  // back are reused by the next read). False for another batch, no read started, or a file that
  // could not be read or is empty: the caller reads that batch itself (and its errors say why).
  bool Take(const std::vector<int64_t>& batch, std::vector<std::vector<uint8_t>>& contents);

 private:
  void Worker(int t);

  const std::vector<std::string>& paths_;
  const int threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int64_t> batch_;                 // the read's dataset indices
  std::vector<std::vector<uint8_t>> contents_;  // its files' bytes, by sample
  std::vector<char> ok_;                        // per sample: read whole
  bool started_ = false;
  int64_t job_ = 0;  // reads started
  int busy_ = 0;     // workers still on the current read
  bool stop_ = false;
  std::vector<std::thread> workers_;  // last: they start once the rest is constructed
};

}  // namespace conveyor::ops
