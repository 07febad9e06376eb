// Loading code, shared by the module, library and link entry points: JIT
// options and their logs, image intake, and the image cuLinkComplete makes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cuda.h"
#include "ptx/program.h"

namespace cucpu::api {

// The JIT options cucpu acts on; the others are accepted and ignored (they
// tune a compiler that is not NVIDIA's).
struct JitOptions {
  char* info_log = nullptr;
  size_t info_size = 0;
  int info_size_slot = -1;  // index of CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES (written back)
  char* error_log = nullptr;
  size_t error_size = 0;
  int error_size_slot = -1;
  int wall_time_slot = -1;  // CU_JIT_WALL_TIME: milliseconds, written back as a float
};
// INVALID_VALUE for a null array with options, or an unknown option.
CUresult read_jit_options(unsigned n, const CUjit_option* options, void* const* values, JitOptions* out);
// Writes the logs (truncated, NUL-terminated) and the sizes and time back.
void write_jit_logs(const JitOptions& o, void** values, const std::string& info, const std::string& error,
                    float ms);

// The parsed programs an image holds: the first of its PTX texts that
// cucpu can compile for this device, or every unit of a link image.
// `size`: the image's size when known, else 0. Messages go to *info and
// *error (for the JIT logs). `texts`, when given, receives the text of
// each program.
CUresult programs_of_image(const void* image, size_t size, std::vector<std::shared_ptr<ptx::Program>>* out,
                           std::string* info, std::string* error, std::vector<std::string>* texts = nullptr);

// Parses one PTX text and checks it suits the device (ISA version, target).
// A text whose .target does not run on the device is INVALID_PTX, as the
// driver answers for PTX text; *other_target, when given, then says so.
CUresult parse_ptx(const std::string& text, std::shared_ptr<ptx::Program>* out, std::string* error,
                   bool* other_target = nullptr);

// cuLinkComplete's output: the units' texts in a container of cucpu's own
// (the driver's cubin is SASS, which cucpu cannot run). One text alone is
// the text itself.
std::vector<char> make_link_image(const std::vector<std::string>& texts);

// Reads a file whole (CUDA_ERROR_FILE_NOT_FOUND when it cannot be read).
CUresult read_file(const char* path, std::vector<char>* out);

}  // namespace cucpu::api
