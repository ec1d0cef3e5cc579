#include "tools/make_sample_data/sample_videos.h"

#include <cstdio>
#include <filesystem>

#include "tools/make_test_videos/test_video.h"

namespace conveyor::sampledata {

long WriteSampleVideos(const std::string& dir) {
  long bytes = 0;
  for (int label = 0; label < kVideoClasses; ++label) {
    const std::string folder = dir + "/videos/class_" + std::to_string(label);
    std::filesystem::create_directories(folder);
    for (int clip = 0; clip < kVideosPerClass; ++clip) {
      testvideos::TestVideoOptions o;
      o.codec = "h264";
      o.container = "mp4";
      o.width = kVideoWidth;
      o.height = kVideoHeight;
      o.frames = kVideoFrames;
      o.gop = 12;
      o.b_frames = 2;
      o.first_frame = SampleVideoFrameNumber(label, clip, 0);
      const std::string path = folder + "/clip_" + std::to_string(clip) + ".mp4";
      testvideos::WriteTestVideo(path, o);
      bytes += static_cast<long>(std::filesystem::file_size(path));
    }
  }
  return bytes;
}

}  // namespace conveyor::sampledata
