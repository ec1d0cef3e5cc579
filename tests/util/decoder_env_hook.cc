// Linked into the test binaries that decode on the GPU: the decoder's measuring switches
// (CONVEYOR_JPEG_*, decoder_env.h) reach every decoder they make, as in the CLI — how the GPU
// bundle's sanitizer runs turn the JPEG engines off under initcheck (tools/bundle_run.sh).
#include "operators/decoders/decoder_env.h"

namespace {
const bool kHooked = [] {
  conveyor::ops::SetDecoderOptionsHook(conveyor::ops::ApplyDecoderEnv);
  return true;
}();
}  // namespace
