// LeakSanitizer suppressions of the video tests (--config=asan): libx265 (3.5, Debian's) leaks a
// few kilobytes per encoder it opens and closes (FrameFilter::init, x265_param_parse's strdups),
// which the tests do while writing their HEVC clips. Nothing of ours is suppressed: the names are
// x265's own functions and its library.
extern "C" const char* __lsan_default_suppressions() { return "leak:libx265.so\n"; }
