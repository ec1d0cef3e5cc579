#include "tools/make_test_videos/frame_code.h"

#include <cmath>

namespace conveyor::testvideos {
namespace {

constexpr int kColumns = 8;
constexpr int kRows = 4;  // two rows of bits, two of their inverses
constexpr double kPi = 3.14159265358979323846;

// Cell (row, column) spans [x0, x1) x [y0, y1) of the top half.
struct Cell {
  int x0, x1, y0, y1;
};

Cell CellAt(int row, int column, int width, int height) {
  const int band = height / 2;
  return Cell{column * width / kColumns, (column + 1) * width / kColumns, row * band / kRows, (row + 1) * band / kRows};
}

bool BitOfCell(int frame_number, int row, int column) {
  const int bit = (row % 2) * kColumns + column;
  const bool value = ((frame_number >> bit) & 1) != 0;
  return row < 2 ? value : !value;
}

uint8_t Wave(double phase) { return static_cast<uint8_t>(std::lround(128.0 + 100.0 * std::sin(2.0 * kPi * phase))); }

// A well-mixed 32-bit hash of a lattice point (the detail's noise needs no more than this).
uint32_t Hash(uint32_t x, uint32_t y, uint32_t seed) {
  uint32_t h = x * 0x8da6b343u ^ y * 0xd8163841u ^ seed * 0xcb1ab31fu;
  h ^= h >> 15;
  h *= 0x2c1b3c6du;
  h ^= h >> 12;
  h *= 0x297a2d39u;
  return h ^ (h >> 15);
}

// Value noise in [-1, 1] on a lattice of `cell` pixels, bilinear between the lattice points.
double Blobs(int x, int y, int cell, uint32_t seed) {
  const int gx = x / cell, gy = y / cell;
  const double fx = static_cast<double>(x % cell) / cell, fy = static_cast<double>(y % cell) / cell;
  auto at = [&](int i, int j) {
    return static_cast<double>(Hash(static_cast<uint32_t>(gx + i), static_cast<uint32_t>(gy + j), seed) & 0xffff) / 32767.5 - 1.0;
  };
  const double top = at(0, 0) + (at(1, 0) - at(0, 0)) * fx, bottom = at(0, 1) + (at(1, 1) - at(0, 1)) * fx;
  return top + (bottom - top) * fy;
}

uint8_t Clamp(double v) { return static_cast<uint8_t>(std::lround(v < 0 ? 0 : (v > 255 ? 255 : v))); }

}  // namespace

void DrawTestFrame(int frame_number, int width, int height, uint8_t* rgb, int stride) {
  for (int row = 0; row < kRows; ++row) {
    for (int column = 0; column < kColumns; ++column) {
      const Cell c = CellAt(row, column, width, height);
      const uint8_t v = BitOfCell(frame_number, row, column) ? 255 : 0;
      for (int y = c.y0; y < c.y1; ++y) {
        uint8_t* p = rgb + static_cast<int64_t>(y) * stride + c.x0 * 3;
        for (int x = c.x0; x < c.x1; ++x, p += 3) p[0] = p[1] = p[2] = v;
      }
    }
  }
  for (int y = height / 2; y < height; ++y) {
    uint8_t* p = rgb + static_cast<int64_t>(y) * stride;
    for (int x = 0; x < width; ++x, p += 3) {
      p[0] = Wave(static_cast<double>(x) / width + frame_number / 40.0);
      p[1] = Wave(0.5 * y / height + frame_number / 60.0);
      p[2] = Wave(static_cast<double>(x + y) / (width + height) - frame_number / 50.0);
    }
  }
}

void AddTestDetail(int frame_number, uint32_t seed, int width, int height, uint8_t* rgb, int stride) {
  // The texture moves 3 px right and 1 px down per frame; the grain is new every frame.
  const int dx = 3 * frame_number, dy = frame_number;
  for (int y = height / 2; y < height; ++y) {
    uint8_t* p = rgb + static_cast<int64_t>(y) * stride;
    for (int x = 0; x < width; ++x, p += 3) {
      const int tx = x + 4096 - dx % 4096, ty = y + 4096 - dy % 4096;  // non-negative lattice coordinates
      const double blobs = 45.0 * Blobs(tx, ty, 24, seed) + 20.0 * Blobs(tx, ty, 6, seed + 1);
      const double fine = static_cast<double>(Hash(static_cast<uint32_t>(tx), static_cast<uint32_t>(ty), seed + 2) & 31) - 15.5;
      const double grain =
          static_cast<double>(Hash(static_cast<uint32_t>(x), static_cast<uint32_t>(y), seed + 3 + static_cast<uint32_t>(frame_number)) & 7) - 3.5;
      const double v = blobs + 0.8 * fine + grain;
      p[0] = Clamp(0.6 * p[0] + v + 20);
      p[1] = Clamp(0.6 * p[1] + 0.9 * v + 20);
      p[2] = Clamp(0.6 * p[2] + 0.8 * v + 20);
    }
  }
}

int ReadFrameNumber(const uint8_t* rgb, int width, int height, int stride) {
  if (width < kColumns * 2 || height < kRows * 4) return -1;
  bool bits[kRows][kColumns];
  for (int row = 0; row < kRows; ++row) {
    for (int column = 0; column < kColumns; ++column) {
      const Cell c = CellAt(row, column, width, height);
      const int w = c.x1 - c.x0, h = c.y1 - c.y0;
      // The central half of the cell: compression rings at the edges.
      const int x0 = c.x0 + w / 4, x1 = c.x1 - w / 4, y0 = c.y0 + h / 4, y1 = c.y1 - h / 4;
      int64_t sum = 0, count = 0;
      for (int y = y0; y < y1; ++y) {
        const uint8_t* p = rgb + static_cast<int64_t>(y) * stride + x0 * 3;
        for (int x = x0; x < x1; ++x, p += 3, ++count) sum += p[0] + p[1] + p[2];
      }
      if (count == 0) return -1;
      const double mean = static_cast<double>(sum) / (3.0 * static_cast<double>(count));
      if (mean > 80 && mean < 176) return -1;  // too grey to decide
      bits[row][column] = mean >= 128;
    }
  }
  int n = 0;
  for (int row = 0; row < 2; ++row) {
    for (int column = 0; column < kColumns; ++column) {
      if (bits[row][column] == bits[row + 2][column]) return -1;  // the inverse disagrees
      if (bits[row][column]) n |= 1 << (row * kColumns + column);
    }
  }
  return n;
}

}  // namespace conveyor::testvideos
