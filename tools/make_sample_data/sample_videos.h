// The sample dataset's video clips (make_sample_data's videos/ folder), for
// pipelines/video_train.yaml and its tests.
//
// | path                                 | contents                                            |
// |--------------------------------------|-----------------------------------------------------|
// | OUTDIR/videos/class_K/clip_J.mp4     | kVideoClasses x kVideosPerClass H.264 clips,        |
// |                                      | kVideoWidth x kVideoHeight, kVideoFrames frames     |
// |                                      | (25 fps, GOP 12, B-frames), ~10 KB each             |
//
// Every frame carries its number (tools/make_test_videos/frame_code.h): frame f of clip_J of
// class_K shows SampleVideoFrameNumber(K, J, f), so a decoded frame tells its class, clip and frame.
#pragma once

#include <string>

namespace conveyor::sampledata {

constexpr int kVideoClasses = 3;
constexpr int kVideosPerClass = 2;
constexpr int kVideoWidth = 64;
constexpr int kVideoHeight = 48;
constexpr int kVideoFrames = 40;

constexpr int SampleVideoFrameNumber(int label, int clip, int frame) { return 1000 * label + 100 * clip + frame; }

// Writes the clips under dir/videos; returns how many bytes they take. Throws std::runtime_error
// (no H.264 encoder in this FFmpeg, a muxer error).
long WriteSampleVideos(const std::string& dir);

}  // namespace conveyor::sampledata
