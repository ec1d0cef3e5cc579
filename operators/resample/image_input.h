// Input checks shared by the geometric image operators (resize, random_resized_crop, crop, flip),
// and the view of a sequence sample (FHWC, FCHW) as frames that share the sample's parameters.
//
// | check        | accepted                                     | message                                   |
// |--------------|----------------------------------------------|-------------------------------------------|
// | layout       | one of `layouts`; empty layout = the first    | op "x" (resize): input 0: expected layout |
// |              | one when the sample rank matches it           | HWC, got CHW                              |
// | dtype        | one of `dtypes`                               | ...: expected dtype uint8 or float32, got |
// |              |                                               | int32                                     |
// | channels     | HWC: 1..max_channels (0 = any)                | ...: sample 2: expected at most 8 channels,|
// |              |                                               | got 9 (shape [4, 5, 9])                    |
//
// A 4-D layout that is not among `layouts` while a sequence layout is (FHWC) gets a hint:
//   op "r" (resize): input 0: expected layout HWC or FHWC, got NHWC (a sequence is FHWC: frames first)
// (flip, which also takes FCHW: "a sequence is FHWC or FCHW").
#pragma once

#include <vector>

#include "core/op/workspace.h"
#include "operators/image_common/image_args.h"  // SplitFrames, JoinFrames

namespace conveyor::ops {

// Returns the input's layout (the first of `layouts` when the input has none).
Layout CheckImageInput(const Workspace& ws, int input, const std::vector<Layout>& layouts,
                       const std::vector<DType>& dtypes, int max_channels);

}  // namespace conveyor::ops
