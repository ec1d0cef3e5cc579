#include "operators/decoders/formats/pnm.h"

#include <netpbm/pnm.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace conveyor::ops {
namespace {

// libnetpbm's error state is process-wide: one mutex guards every call, and with it this buffer.
std::mutex netpbm_mutex;
char netpbm_message[256];

void OnNetpbmError(const char* message) {
  std::snprintf(netpbm_message, sizeof(netpbm_message), "%s", message);
  const size_t n = std::strlen(netpbm_message);
  if (n > 0 && netpbm_message[n - 1] == '\n') netpbm_message[n - 1] = '\0';
}
void OnNetpbmMessage(const char*) {}  // informational messages: not ours to print

void InitNetpbm() {
  static std::once_flag once;
  std::call_once(once, [] {
    pm_init("conveyor", 0);
    pm_setusererrormsgfn(OnNetpbmError);
    pm_setusermessagefn(OnNetpbmMessage);
  });
}

struct PnmHeader {
  int cols = 0, rows = 0, format = 0;
  xelval maxval = 0;
};

// pm_error longjmps back here (never past a C++ destructor: this frame owns none).
bool ReadHeader(FILE* file, PnmHeader* header) {
  jmp_buf jump;
  jmp_buf* saved = nullptr;
  pm_setjmpbufsave(&jump, &saved);
  if (setjmp(jump)) {
    pm_setjmpbuf(saved);
    return false;
  }
  pnm_readpnminit(file, &header->cols, &header->rows, &header->maxval, &header->format);
  pm_setjmpbuf(saved);
  return true;
}

// Reads rows 0 .. window bottom into `row` (cols xels), converting the window's part of each.
bool ReadRows(FILE* file, const PnmHeader& header, const CropWindow& window, OutputColor color, xel* row, uint8_t* out) {
  jmp_buf jump;
  jmp_buf* saved = nullptr;
  pm_setjmpbufsave(&jump, &saved);
  if (setjmp(jump)) {
    pm_setjmpbuf(saved);
    return false;
  }
  const bool ppm = PNM_FORMAT_TYPE(header.format) == PPM_TYPE;
  const unsigned maxval = header.maxval;
  const int channels = OutputChannels(color);
  for (int64_t y = 0; y < window.y + window.h; ++y) {
    pnm_readpnmrow(file, row, header.cols, header.maxval, header.format);
    if (y < window.y) continue;
    uint8_t* dst = out + static_cast<size_t>(y - window.y) * static_cast<size_t>(window.w) * channels;
    for (int64_t x = window.x; x < window.x + window.w; ++x) {
      const xel& p = row[x];
      const auto to8 = [maxval](unsigned v) {
        return static_cast<uint8_t>(maxval == 255 ? v : (v * 255u + maxval / 2) / maxval);
      };
      uint8_t px[3] = {to8(ppm ? PPM_GETR(p) : PNM_GET1(p)), to8(PPM_GETG(p)), to8(PPM_GETB(p))};
      ConvertRow(px, ppm ? 3 : 1, 1, color, dst);
      dst += channels;
    }
  }
  pm_setjmpbuf(saved);
  return true;
}

struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};

std::unique_ptr<FILE, FileCloser> OpenMemory(const uint8_t* data, size_t size) {
  FILE* f = fmemopen(const_cast<uint8_t*>(data), size, "rb");
  if (f == nullptr) throw InvalidArgument("PNM: fmemopen failed for " + std::to_string(size) + " bytes");
  return std::unique_ptr<FILE, FileCloser>(f);
}

std::string NetpbmReason() {
  const std::string message = netpbm_message;
  const bool truncated = message.find("EOF") != std::string::npos || message.find("end of file") != std::string::npos ||
                         message.find("premature") != std::string::npos;
  return (truncated ? "truncated PNM data (libnetpbm: " : "corrupt or unsupported PNM (libnetpbm: ") + message + ")";
}

// Under the lock. Throws what ParsePnmInfo documents.
PnmHeader ReadCheckedHeader(FILE* file, size_t size, int64_t max_pixels) {
  PnmHeader h;
  netpbm_message[0] = '\0';
  if (!ReadHeader(file, &h)) {
    throw InvalidArgument(size < 16 && std::string(netpbm_message).find("EOF") != std::string::npos
                              ? "truncated PNM header: " + std::to_string(size) + " bytes (libnetpbm: " +
                                    netpbm_message + ")"
                              : NetpbmReason());
  }
  if (h.cols <= 0 || h.rows <= 0) {
    throw InvalidArgument("malformed PNM header: size " + std::to_string(h.cols) + "x" + std::to_string(h.rows));
  }
  CheckDeclaredSize("PNM", static_cast<uint64_t>(h.cols), static_cast<uint64_t>(h.rows), max_pixels);
  // Raw samples take 1 bit (P4), 1 or 2 bytes (P5, P6); plain ones at least a character each.
  const int type = PNM_FORMAT_TYPE(h.format);
  const uint64_t pixels = static_cast<uint64_t>(h.cols) * static_cast<uint64_t>(h.rows);
  const uint64_t samples = pixels * (type == PPM_TYPE ? 3 : 1);
  uint64_t least = samples;
  std::string what = "at least " + std::to_string(samples) + " characters of plain samples";
  if (h.format == RPBM_FORMAT) {
    least = (static_cast<uint64_t>(h.cols) + 7) / 8 * static_cast<uint64_t>(h.rows);
    what = std::to_string(least) + " bytes of packed bits";
  } else if (h.format == RPGM_FORMAT || h.format == RPPM_FORMAT) {
    least = samples * (h.maxval > 255 ? 2 : 1);
    what = std::to_string(least) + " bytes of raw samples";
  }
  CheckSizeFitsFile("PNM", static_cast<uint64_t>(h.cols), static_cast<uint64_t>(h.rows), least, what, size);
  return h;
}

}  // namespace

ImageInfo ParsePnmInfo(const uint8_t* data, size_t size, int64_t max_pixels) {
  auto file = OpenMemory(data, size);
  std::lock_guard<std::mutex> lock(netpbm_mutex);
  InitNetpbm();
  const PnmHeader h = ReadCheckedHeader(file.get(), size, max_pixels);
  ImageInfo info;
  info.format = ImageFormat::kPnm;
  info.width = h.cols;
  info.height = h.rows;
  info.components = PNM_FORMAT_TYPE(h.format) == PPM_TYPE ? 3 : 1;
  int bits = 0;
  while (bits < 16 && (1u << bits) <= h.maxval) ++bits;
  info.bit_depth = bits;
  info.detail = std::string("P") + static_cast<char>(data[1]);
  return info;
}

void DecodePnm(const uint8_t* data, size_t size, const ImageInfo& info, OutputColor color, const CropWindow& window,
               uint8_t* out, int64_t max_pixels) {
  auto file = OpenMemory(data, size);
  std::vector<xel> row(static_cast<size_t>(info.width));
  std::lock_guard<std::mutex> lock(netpbm_mutex);
  InitNetpbm();
  const PnmHeader h = ReadCheckedHeader(file.get(), size, max_pixels);
  if (h.cols != info.width || h.rows != info.height) throw InvalidArgument("PNM header changed between reads");
  netpbm_message[0] = '\0';
  if (!ReadRows(file.get(), h, window, color, row.data(), out)) throw InvalidArgument(NetpbmReason());
}

}  // namespace conveyor::ops
