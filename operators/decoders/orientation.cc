#include "operators/decoders/orientation.h"

#include <libexif/exif-data.h>
#include <libexif/exif-utils.h>

#include <cstring>
#include <limits>
#include <memory>

namespace conveyor::ops {

int ExifOrientation(const uint8_t* exif, size_t size) {
  // libexif takes at most 64 KiB (one APP1 segment) and an unsigned int size.
  if (exif == nullptr || size < 6 || size > std::numeric_limits<unsigned int>::max()) return 1;
  std::unique_ptr<ExifData, void (*)(ExifData*)> data(exif_data_new(), exif_data_unref);
  if (data == nullptr) return 1;
  // Read only: no fixing up to the specification (which would add default entries), maker notes
  // left alone. libexif bounds-checks every offset and count against `size`, logging (to no
  // handler: nothing printed) and skipping what does not fit.
  exif_data_unset_option(data.get(), EXIF_DATA_OPTION_FOLLOW_SPECIFICATION);
  exif_data_set_option(data.get(), EXIF_DATA_OPTION_DONT_CHANGE_MAKER_NOTE);
  exif_data_load_data(data.get(), exif, static_cast<unsigned int>(size));
  ExifContent* ifd0 = data->ifd[EXIF_IFD_0];
  ExifEntry* entry = ifd0 != nullptr ? exif_content_get_entry(ifd0, EXIF_TAG_ORIENTATION) : nullptr;
  if (entry == nullptr || entry->data == nullptr || entry->components < 1) return 1;
  const ExifByteOrder order = exif_data_get_byte_order(data.get());
  // The specification says SHORT; a LONG is read too (some writers), anything else ignored.
  if (entry->format == EXIF_FORMAT_SHORT && entry->size >= 2) return ValidOrientation(exif_get_short(entry->data, order));
  if (entry->format == EXIF_FORMAT_LONG && entry->size >= 4) {
    const ExifLong value = exif_get_long(entry->data, order);
    return value <= 8 ? ValidOrientation(static_cast<int>(value)) : 1;
  }
  return 1;
}

CropWindow StoredWindow(const CropWindow& shown, int64_t stored_height, int64_t stored_width, int orientation) {
  const int64_t y = shown.y, x = shown.x, h = shown.h, w = shown.w;
  const int64_t H = stored_height, W = stored_width;
  switch (orientation) {
    case 2: return CropWindow{y, W - x - w, h, w};
    case 3: return CropWindow{H - y - h, W - x - w, h, w};
    case 4: return CropWindow{H - y - h, x, h, w};
    case 5: return CropWindow{x, y, w, h};
    case 6: return CropWindow{H - x - w, y, w, h};
    case 7: return CropWindow{H - x - w, W - y - h, w, h};
    case 8: return CropWindow{x, W - y - h, w, h};
    default: return shown;
  }
}

namespace {

// Copies `channels` bytes (1 or 3 in practice; any count works).
inline void CopyPixel(const uint8_t* src, int channels, uint8_t* dst) {
  for (int c = 0; c < channels; ++c) dst[c] = src[c];
}

}  // namespace

void OrientPixels(const uint8_t* stored, int64_t height, int64_t width, int channels, int orientation, uint8_t* out) {
  const size_t ch = static_cast<size_t>(channels);
  const size_t row = static_cast<size_t>(width) * ch;
  const auto at = [&](int64_t r, int64_t c) { return stored + static_cast<size_t>(r) * row + static_cast<size_t>(c) * ch; };
  if (!SwapsAxes(orientation)) {
    // Rows stay rows: 1 and 4 copy whole rows, 2 and 3 reverse each.
    const bool flip_rows = orientation == 3 || orientation == 4;
    const bool mirror = orientation == 2 || orientation == 3;
    for (int64_t r = 0; r < height; ++r) {
      const int64_t src_row = flip_rows ? height - 1 - r : r;
      uint8_t* dst = out + static_cast<size_t>(r) * row;
      if (!mirror) {
        std::memcpy(dst, at(src_row, 0), row);
        continue;
      }
      for (int64_t c = 0; c < width; ++c) CopyPixel(at(src_row, width - 1 - c), channels, dst + static_cast<size_t>(c) * ch);
    }
    return;
  }
  // Shown rows are stored columns: shown is width x height. Row r of the shown image reads stored
  // column (5, 6) r or (7, 8) width-1-r, from the top (5, 8) or the bottom (6, 7).
  const int64_t shown_h = width, shown_w = height;
  const bool column_from_right = orientation == 7 || orientation == 8;
  const bool from_bottom = orientation == 6 || orientation == 7;
  for (int64_t r = 0; r < shown_h; ++r) {
    const int64_t src_col = column_from_right ? width - 1 - r : r;
    uint8_t* dst = out + static_cast<size_t>(r) * static_cast<size_t>(shown_w) * ch;
    for (int64_t c = 0; c < shown_w; ++c) {
      CopyPixel(at(from_bottom ? height - 1 - c : c, src_col), channels, dst + static_cast<size_t>(c) * ch);
    }
  }
}

}  // namespace conveyor::ops
