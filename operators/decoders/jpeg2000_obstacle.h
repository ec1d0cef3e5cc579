// What keeps a JPEG 2000 file off the GPU (the nvJPEG2000 path) although its components would do,
// read from its JP2 boxes and SIZ marker segment: the things OpenJPEG applies on the CPU that
// nvJPEG2000 does not, or that we have not checked it does alike. GPU-free; unit-tested.
//
// | obstacle                                  | why                                             |
// |-------------------------------------------|-------------------------------------------------|
// | a palette (pclr) or component mapping     | OpenJPEG expands palette indices to colours;    |
// | (cmap)                                    | nvJPEG2000 gives the indices                     |
// | a channel definition (cdef) other than    | OpenJPEG reorders channels and drops alpha by   |
// | colour channels 1..n in order             | it                                              |
// | an image offset (XOsiz or YOsiz > 0)      | windows are in image coordinates here; the      |
// |                                           | decode area's origin with an offset is unproven |
// | a box or SIZ cut off by the file's end    | the CPU path names the damage                   |
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace conveyor::ops {

// "" when nothing stands in the way; else the reason ("a JP2 palette (pclr box)").
std::string Jpeg2000GpuObstacle(const uint8_t* data, size_t size);

}  // namespace conveyor::ops
