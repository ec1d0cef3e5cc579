// The known content of every test video frame: its frame number drawn as a code that lossy
// compression cannot confuse, above a smooth gradient that moves from frame to frame (so encoders
// see real motion and B-frames have something to predict).
//
//   +---+---+---+---+---+---+---+---+   rows 0-1: bits 0..15 of the frame number, black = 0,
//   | b0| b1| b2| b3| b4| b5| b6| b7|   white = 1, each cell W/8 x H/8 pixels
//   +---+---+---+---+---+---+---+---+
//   | b8| ...                    |b15|
//   +---+---+---+---+---+---+---+---+   rows 2-3: the same 16 bits inverted, so a cell that
//   |~b0| ...                        |   compression pushed to the wrong side is caught, not read
//   +---+---+---+---+---+---+---+---+
//   |~b8| ...                    ~b15|
//   +-------------------------------+
//   |  smooth gradient, phase moves  |   bottom half: three sine waves, one per channel
//   |  with the frame number         |
//   +-------------------------------+
//
// ReadFrameNumber averages the central half of each cell, so ringing at the cell edges and chroma
// subsampling do not matter; frames as small as 64x64 read back after every encoder here.
#pragma once

#include <cstdint>

namespace conveyor::testvideos {

constexpr int kFrameCodeBits = 16;  // frame numbers 0..65535

// Writes frame `frame_number` as packed RGB (3 bytes per pixel, `stride` bytes per row).
void DrawTestFrame(int frame_number, int width, int height, uint8_t* rgb, int stride);

// Adds camera-like detail to the bottom half of a frame DrawTestFrame wrote (the code rows stay
// as they are, so the number still reads): a texture of coarse blobs and fine grain that pans a few
// pixels per frame (motion an encoder predicts, as in real footage) plus a little grain that changes
// every frame (which no encoder predicts). Smooth gradients alone compress to almost nothing; with
// this, 720p streams at the encoders' settings here carry bitrates of real footage, so decoders
// are timed on realistic work. Deterministic in (frame_number, seed).
void AddTestDetail(int frame_number, uint32_t seed, int width, int height, uint8_t* rgb, int stride);

// The frame number drawn into an RGB frame (packed, `stride` bytes per row), or -1 when the code
// cannot be read: a cell too grey to decide, or a bit that disagrees with its inverted copy.
int ReadFrameNumber(const uint8_t* rgb, int width, int height, int stride);

}  // namespace conveyor::testvideos
