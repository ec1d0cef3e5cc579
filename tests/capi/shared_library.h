// Finds and opens libconveyor_c.so for tests that check the shared library itself.
#pragma once

#include <string>

namespace conveyor::capi::testing {

// dlopen()s the library as Bazel lays it out for the test (runfiles), or beside the test binary
// when a bundle copied both elsewhere. Returns NULL when none exists, with the paths tried in
// `tried`; a library that exists but fails to open is reported in `tried` too.
void* OpenConveyorLibrary(std::string& tried);

}  // namespace conveyor::capi::testing
