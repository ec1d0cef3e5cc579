#include "cli/image_grid.h"

#include <png.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>

#include "core/error.h"

namespace conveyor::cli {
namespace {

// 5x7 glyphs, one string per row, '#' = ink. Drawn by hand for this project.
struct Glyph {
  char c;
  const char* rows[7];
};

constexpr Glyph kGlyphs[] = {
    {'0', {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."}},
    {'1', {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."}},
    {'2', {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"}},
    {'3', {"#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."}},
    {'4', {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."}},
    {'5', {"#####", "#....", "####.", "....#", "....#", "#...#", ".###."}},
    {'6', {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."}},
    {'7', {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."}},
    {'8', {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."}},
    {'9', {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."}},
    {'A', {".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"}},
    {'B', {"####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."}},
    {'C', {".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."}},
    {'D', {"###..", "#..#.", "#...#", "#...#", "#...#", "#..#.", "###.."}},
    {'E', {"#####", "#....", "#....", "####.", "#....", "#....", "#####"}},
    {'F', {"#####", "#....", "#....", "####.", "#....", "#....", "#...."}},
    {'G', {".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"}},
    {'H', {"#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"}},
    {'I', {".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."}},
    {'J', {"..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."}},
    {'K', {"#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"}},
    {'L', {"#....", "#....", "#....", "#....", "#....", "#....", "#####"}},
    {'M', {"#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"}},
    {'N', {"#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#"}},
    {'O', {".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."}},
    {'P', {"####.", "#...#", "#...#", "####.", "#....", "#....", "#...."}},
    {'Q', {".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#"}},
    {'R', {"####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"}},
    {'S', {".####", "#....", "#....", ".###.", "....#", "....#", "####."}},
    {'T', {"#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."}},
    {'U', {"#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."}},
    {'V', {"#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."}},
    {'W', {"#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."}},
    {'X', {"#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"}},
    {'Y', {"#...#", "#...#", "#...#", ".#.#.", "..#..", "..#..", "..#.."}},
    {'Z', {"#####", "....#", "...#.", "..#..", ".#...", "#....", "#####"}},
    {' ', {".....", ".....", ".....", ".....", ".....", ".....", "....."}},
    {'-', {".....", ".....", ".....", "#####", ".....", ".....", "....."}},
    {'.', {".....", ".....", ".....", ".....", ".....", ".##..", ".##.."}},
    {':', {".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."}},
    {'#', {".#.#.", ".#.#.", "#####", ".#.#.", "#####", ".#.#.", ".#.#."}},
    {'_', {".....", ".....", ".....", ".....", ".....", ".....", "#####"}},
    {'/', {"....#", "....#", "...#.", "..#..", ".#...", "#....", "#...."}},
    {'=', {".....", ".....", "#####", ".....", "#####", ".....", "....."}},
    {'(', {"...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."}},
    {')', {".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."}},
};
constexpr Glyph kBox = {'?', {"#####", "#...#", "#...#", "#...#", "#...#", "#...#", "#####"}};

const Glyph& FindGlyph(char c) {
  const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const Glyph& g : kGlyphs) {
    if (g.c == u) return g;
  }
  return kBox;
}

}  // namespace

int CaptionScale(int cell_w) { return cell_w >= 128 ? 2 : 1; }
int CaptionHeight(int cell_w) { return 7 * CaptionScale(cell_w) + 4; }

int TextWidth(const std::string& text, int scale) {
  return text.empty() ? 0 : static_cast<int>(text.size()) * 6 * scale - scale;
}

int DrawText(RgbImage& image, int x, int y, const std::string& text, int scale, const uint8_t rgb[3],
             int max_width) {
  const int x_end = std::min(image.width, x + max_width);
  for (size_t i = 0; i < text.size(); ++i) {
    const Glyph& g = FindGlyph(text[i]);
    const int gx = x + static_cast<int>(i) * 6 * scale;
    for (int row = 0; row < 7; ++row) {
      for (int col = 0; col < 5; ++col) {
        if (g.rows[row][col] != '#') continue;
        for (int dy = 0; dy < scale; ++dy) {
          for (int dx = 0; dx < scale; ++dx) {
            const int px = gx + col * scale + dx, py = y + row * scale + dy;
            if (px >= 0 && py >= 0 && px < x_end && py < image.height) std::memcpy(image.at(px, py), rgb, 3);
          }
        }
      }
    }
  }
  return TextWidth(text, scale);
}

GridPlacement PlaceGrid(const std::vector<RgbImage>& tiles, int columns) {
  GridPlacement p;
  p.columns = columns > 0 ? columns : std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(tiles.size())))));
  for (const RgbImage& t : tiles) {
    p.cell_w = std::max(p.cell_w, t.width);
    p.cell_h = std::max(p.cell_h, t.height);
  }
  // Wide enough for a short caption even under tiny tiles.
  p.cell_w = std::max(p.cell_w, 48);
  return p;
}

RgbImage RenderGrid(const std::vector<RgbImage>& tiles, const std::vector<std::string>& captions, int columns) {
  const GridPlacement p = PlaceGrid(tiles, columns);
  const int n = static_cast<int>(tiles.size());
  const int rows = std::max(1, (n + p.columns - 1) / p.columns);
  const int caption_h = CaptionHeight(p.cell_w);
  RgbImage grid(kGridPad + p.columns * (p.cell_w + kGridPad), kGridPad + rows * (p.cell_h + caption_h + kGridPad),
                kBackground);
  const uint8_t white[3] = {255, 255, 255};
  for (int i = 0; i < n; ++i) {
    const RgbImage& t = tiles[static_cast<size_t>(i)];
    const int x0 = p.TileX(i), y0 = p.TileY(i);
    for (int y = 0; y < t.height; ++y) std::memcpy(grid.at(x0, y0 + y), t.at(0, y), static_cast<size_t>(t.width) * 3);
    if (static_cast<size_t>(i) < captions.size()) {
      DrawText(grid, x0, y0 - caption_h + 2, captions[static_cast<size_t>(i)], CaptionScale(p.cell_w), white,
               p.cell_w);
    }
  }
  return grid;
}

RgbImage ShrinkToFit(const RgbImage& image, int max_w, int max_h) {
  if (image.width <= max_w && image.height <= max_h) return image;
  const double k = std::min(static_cast<double>(max_w) / image.width, static_cast<double>(max_h) / image.height);
  const int w = std::max(1, static_cast<int>(std::lround(image.width * k)));
  const int h = std::max(1, static_cast<int>(std::lround(image.height * k)));
  RgbImage out(w, h);
  for (int y = 0; y < h; ++y) {
    const int y0 = static_cast<int>(static_cast<int64_t>(y) * image.height / h);
    const int y1 = std::max(y0 + 1, static_cast<int>(static_cast<int64_t>(y + 1) * image.height / h));
    for (int x = 0; x < w; ++x) {
      const int x0 = static_cast<int>(static_cast<int64_t>(x) * image.width / w);
      const int x1 = std::max(x0 + 1, static_cast<int>(static_cast<int64_t>(x + 1) * image.width / w));
      int64_t sum[3] = {0, 0, 0};
      for (int yy = y0; yy < y1; ++yy) {
        for (int xx = x0; xx < x1; ++xx) {
          for (int c = 0; c < 3; ++c) sum[c] += image.at(xx, yy)[c];
        }
      }
      const int64_t n = static_cast<int64_t>(y1 - y0) * (x1 - x0);
      for (int c = 0; c < 3; ++c) out.at(x, y)[c] = static_cast<uint8_t>((sum[c] + n / 2) / n);
    }
  }
  return out;
}

void ClassColour(int64_t label, uint8_t rgb[3]) {
  // Hue in sixths of the circle; s = v = 1, so one channel is 255, one is 0, one ramps.
  const double golden = 0.6180339887498949;
  double hue = std::fmod(static_cast<double>(label) * golden, 1.0);
  if (hue < 0) hue += 1.0;
  const double h6 = hue * 6.0;
  const int sector = std::min(5, static_cast<int>(h6));
  const auto ramp = static_cast<uint8_t>(std::lround((h6 - sector) * 255.0));
  const auto fall = static_cast<uint8_t>(255 - ramp);
  const uint8_t table[6][3] = {{255, ramp, 0}, {fall, 255, 0}, {0, 255, ramp},
                               {0, fall, 255}, {ramp, 0, 255}, {255, 0, fall}};
  std::memcpy(rgb, table[sector], 3);
}

void DrawBoxOutline(RgbImage& image, double left, double top, double right, double bottom, const uint8_t rgb[3]) {
  constexpr double kSlack = 1e-3;
  if (!(left < right) || !(top < bottom)) return;  // also NaN
  if (right <= 0 || bottom <= 0 || left >= image.width || top >= image.height) return;
  auto clamp_x = [&](double v) { return static_cast<int>(std::clamp(v, 0.0, image.width - 1.0)); };
  auto clamp_y = [&](double v) { return static_cast<int>(std::clamp(v, 0.0, image.height - 1.0)); };
  const int x0 = clamp_x(std::floor(left + kSlack)), x1 = clamp_x(std::ceil(right - kSlack) - 1);
  const int y0 = clamp_y(std::floor(top + kSlack)), y1 = clamp_y(std::ceil(bottom - kSlack) - 1);
  for (int x = x0; x <= x1; ++x) {
    std::memcpy(image.at(x, y0), rgb, 3);
    std::memcpy(image.at(x, y1), rgb, 3);
  }
  for (int y = y0; y <= y1; ++y) {
    std::memcpy(image.at(x0, y), rgb, 3);
    std::memcpy(image.at(x1, y), rgb, 3);
  }
}

void DrawLabelOutlines(RgbImage& image, const std::vector<int64_t>& labels) {
  const int w = image.width, h = image.height;
  auto at = [&](int x, int y) { return labels[static_cast<size_t>(y) * w + x]; };
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const int64_t label = at(x, y);
      if (label == 0) continue;
      const bool edge = (x > 0 && at(x - 1, y) != label) || (x + 1 < w && at(x + 1, y) != label) ||
                        (y > 0 && at(x, y - 1) != label) || (y + 1 < h && at(x, y + 1) != label);
      if (edge) ClassColour(label, image.at(x, y));
    }
  }
}

void WritePng(const std::string& path, const RgbImage& image) {
  png_image png;
  std::memset(&png, 0, sizeof(png));
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width);
  png.height = static_cast<png_uint_32>(image.height);
  png.format = PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&png, path.c_str(), 0, image.pixels.data(), image.width * 3, nullptr)) {
    const std::string why = png.message;
    png_image_free(&png);
    throw InvalidArgument("cannot write the PNG file \"" + path + "\": " + why);
  }
}

}  // namespace conveyor::cli
