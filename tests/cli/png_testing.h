// Reading back the PNG files `conveyor preview` writes (libpng's simplified API), for the preview
// tests.
#pragma once

#include <png.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "cli/image_grid.h"

namespace conveyor::cli_test {

// The PNG at `path` as RGB8; a failure (and an empty image) when it cannot be read.
inline cli::RgbImage ReadPng(const std::string& path) {
  png_image png;
  std::memset(&png, 0, sizeof(png));
  png.version = PNG_IMAGE_VERSION;
  cli::RgbImage image;
  if (!png_image_begin_read_from_file(&png, path.c_str())) {
    ADD_FAILURE() << path << ": " << png.message;
    return image;
  }
  png.format = PNG_FORMAT_RGB;
  image = cli::RgbImage(static_cast<int>(png.width), static_cast<int>(png.height));
  EXPECT_TRUE(png_image_finish_read(&png, nullptr, image.pixels.data(), 0, nullptr)) << png.message;
  return image;
}

}  // namespace conveyor::cli_test
