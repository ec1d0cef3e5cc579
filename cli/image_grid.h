// The picture `conveyor preview` writes: tiles (RGB8 images) in a grid, each under a caption in a
// 5x7 bitmap font of our own, saved as PNG with libpng.
//
// Layout (all in pixels; `cell_w`/`cell_h` are the largest tile's width and height):
//
//   pad ┌────────── cell_w ──────────┐ pad ┌─ ...      columns = ceil(sqrt(n))
//       │ caption band (CaptionHeight)│
//       │ tile, top-left aligned      │
//       └────────────────────────────-┘
//   pad between rows and around the edge; background kBackground; caption text white.
//
// TileOrigin() gives where tile i's top-left pixel lands, for callers and tests.
//
// Overlays drawn on a tile before it is placed (preview's boxes and mask outlines), one pixel wide,
// in a colour fixed by the class (ClassColour):
//   box   [l, r) x [t, b) in pixels → outline on columns floor(l), ceil(r) - 1,
//                                     rows floor(t), ceil(b) - 1
//   mask  a pixel with label L != 0 whose 4-neighbour inside the map has another label
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace conveyor::cli {

struct RgbImage {
  int width = 0, height = 0;
  std::vector<uint8_t> pixels;  // HWC, 3 channels
  RgbImage() = default;
  RgbImage(int w, int h, uint8_t fill = 0) : width(w), height(h), pixels(static_cast<size_t>(w) * h * 3, fill) {}
  uint8_t* at(int x, int y) { return &pixels[(static_cast<size_t>(y) * width + x) * 3]; }
  const uint8_t* at(int x, int y) const { return &pixels[(static_cast<size_t>(y) * width + x) * 3]; }
};

inline constexpr int kGridPad = 4;
inline constexpr uint8_t kBackground = 40;

// Font scale for tiles of this width (2 from 128 pixels, else 1) and the caption band's height.
int CaptionScale(int cell_w);
int CaptionHeight(int cell_w);

// Draws `text` (digits, letters — lower case drawn as upper case — and " -.:#_/=()"; other
// characters as a box) at (x, y) with 1-pixel spacing, clipped to the image and to `max_width`
// pixels from x (a caption stays in its cell). Returns the unclipped width.
int DrawText(RgbImage& image, int x, int y, const std::string& text, int scale, const uint8_t rgb[3],
             int max_width = 1 << 30);
int TextWidth(const std::string& text, int scale);

struct GridPlacement {
  int columns = 0, cell_w = 0, cell_h = 0;
  int TileX(int i) const { return kGridPad + (i % columns) * (cell_w + kGridPad); }
  int TileY(int i) const { return kGridPad + (i / columns) * (cell_h + CaptionHeight(cell_w) + kGridPad) + CaptionHeight(cell_w); }
};
// `columns` 0: ceil(sqrt(n)).
GridPlacement PlaceGrid(const std::vector<RgbImage>& tiles, int columns = 0);

RgbImage RenderGrid(const std::vector<RgbImage>& tiles, const std::vector<std::string>& captions, int columns = 0);

// `image` shrunk (box filter: each output pixel the mean of the input pixels it covers) so that it
// fits in max_w x max_h, aspect ratio kept (sides at least 1); returned as is when it fits.
RgbImage ShrinkToFit(const RgbImage& image, int max_w, int max_h);

// Class `label`'s colour: fully saturated (one channel 255, one 0), the hue stepped by the golden
// ratio so that neighbouring classes differ; the same label always gives the same colour.
void ClassColour(int64_t label, uint8_t rgb[3]);

// The outline of the box from (left, top) to (right, bottom), in pixels of `image` (edges between
// pixels: a box covering columns 2..5 is left 2, right 6); 1e-3 pixel of rounding is forgiven
// either way. Clipped to the image; a box without area inside it, or with a NaN, draws nothing.
void DrawBoxOutline(RgbImage& image, double left, double top, double right, double bottom, const uint8_t rgb[3]);

// `labels` is a map of image.width x image.height labels (row-major). Outlines each region of a
// nonzero label in ClassColour(label): the pixels with a 4-neighbour (inside the map) of another
// label.
void DrawLabelOutlines(RgbImage& image, const std::vector<int64_t>& labels);

// Throws InvalidArgument naming the path when it cannot be written.
void WritePng(const std::string& path, const RgbImage& image);

}  // namespace conveyor::cli
