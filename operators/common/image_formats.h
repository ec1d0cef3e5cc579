// The encoded image formats the decoders take, by file name: the one list readers.file's default
// `file_filters` and the decoders' documentation read, so a reader never serves files no decoder
// takes. A format joins here when its decoder lands (decoders.* choose the format from the
// content — image_info.h — never from the name; these patterns only pick which files to read).
#pragma once

#include <string>
#include <vector>

namespace conveyor::ops {

struct ImageFormatFiles {
  const char* format;                 // as image_info.h's ImageFormatName says: "JPEG", "PNG", ...
  std::vector<std::string> patterns;  // fnmatch patterns, matched case-insensitively
};

// Every format the decoders take (docs/decoding.md), each with its usual file names.
inline const std::vector<ImageFormatFiles>& DecodableImageFormats() {
  static const std::vector<ImageFormatFiles> formats = {
      {"JPEG", {"*.jpg", "*.jpeg", "*.jpe", "*.jfif"}},
      {"PNG", {"*.png"}},
      {"TIFF", {"*.tif", "*.tiff"}},
      {"WebP", {"*.webp"}},
      {"PNM", {"*.pnm", "*.pbm", "*.pgm", "*.ppm"}},
      {"BMP", {"*.bmp", "*.dib"}},
      {"JPEG2000", {"*.jp2", "*.j2k", "*.j2c", "*.jpc"}},
  };
  return formats;
}

// Every pattern of DecodableImageFormats, in order: readers.file's default file_filters.
inline std::vector<std::string> DecodableImageFilters() {
  std::vector<std::string> all;
  for (const ImageFormatFiles& f : DecodableImageFormats()) all.insert(all.end(), f.patterns.begin(), f.patterns.end());
  return all;
}

}  // namespace conveyor::ops
