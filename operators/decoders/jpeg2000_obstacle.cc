#include "operators/decoders/jpeg2000_obstacle.h"

#include <cstring>

namespace conveyor::ops {
namespace {

uint32_t U32(const uint8_t* p) { return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3]; }
uint16_t U16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }

constexpr uint8_t kCodestreamStart[4] = {0xFF, 0x4F, 0xFF, 0x51};  // SOC, then SIZ

// One box of a JP2 file: its type and its contents [begin, end).
struct Box {
  char type[5] = {};
  size_t begin = 0, end = 0;
};

// The box at `pos` (inside [pos, limit)); false when its header is cut off or its length impossible.
bool ReadBox(const uint8_t* data, size_t pos, size_t limit, Box& box) {
  if (pos + 8 > limit) return false;
  uint64_t length = U32(data + pos);
  size_t header = 8;
  if (length == 1) {
    if (pos + 16 > limit) return false;
    length = uint64_t{U32(data + pos + 8)} << 32 | U32(data + pos + 12);
    header = 16;
  } else if (length == 0) {
    length = limit - pos;  // the last box runs to the end
  }
  if (length < header || length > limit - pos) return false;
  std::memcpy(box.type, data + pos + 4, 4);
  box.begin = pos + header;
  box.end = pos + static_cast<size_t>(length);
  return true;
}

// The header superbox's obstacles ("" for none).
std::string HeaderObstacle(const uint8_t* data, const Box& jp2h) {
  Box box;
  for (size_t pos = jp2h.begin; pos < jp2h.end; pos = box.end) {
    if (!ReadBox(data, pos, jp2h.end, box)) return "a JP2 header box cut off";
    const std::string type = box.type;
    if (type == "pclr") return "a JP2 palette (pclr box)";
    if (type == "cmap") return "a JP2 component mapping (cmap box)";
    if (type != "cdef") continue;
    const size_t size = box.end - box.begin;
    if (size < 2) return "a JP2 channel definition (cdef box) cut off";
    const size_t n = U16(data + box.begin);
    if (size < 2 + n * 6) return "a JP2 channel definition (cdef box) cut off";
    for (size_t i = 0; i < n; ++i) {
      const uint8_t* e = data + box.begin + 2 + i * 6;
      const unsigned channel = U16(e), kind = U16(e + 2), association = U16(e + 4);
      if (kind != 0 || association != channel + 1) {
        return "a JP2 channel definition (cdef box) other than colour channels in order: channel " +
               std::to_string(channel) + " type " + std::to_string(kind) + " association " +
               std::to_string(association);
      }
    }
  }
  return "";
}

}  // namespace

std::string Jpeg2000GpuObstacle(const uint8_t* data, size_t size) {
  size_t codestream = 0;
  if (size < 4 || std::memcmp(data, kCodestreamStart, 4) != 0) {  // JP2: walk the top-level boxes
    bool found = false;
    Box box;
    for (size_t pos = 0; pos < size && !found; pos = box.end) {
      if (!ReadBox(data, pos, size, box)) return "a JP2 box cut off";
      const std::string type = box.type;
      if (type == "jp2h") {
        if (std::string why = HeaderObstacle(data, box); !why.empty()) return why;
      } else if (type == "jp2c") {
        codestream = box.begin;
        found = true;
      }
    }
    if (!found) return "no JP2 codestream box (jp2c)";
  }
  if (codestream + 24 > size || std::memcmp(data + codestream, kCodestreamStart, 4) != 0) {
    return "no SIZ marker segment at the codestream's start";
  }
  const uint32_t x_offset = U32(data + codestream + 16), y_offset = U32(data + codestream + 20);
  if (x_offset != 0 || y_offset != 0) {
    return "an image offset (" + std::to_string(x_offset) + ", " + std::to_string(y_offset) + ") in SIZ";
  }
  return "";
}

}  // namespace conveyor::ops
