// File: input_file.h
// Layer: kairos_util. THE way kairos opens a file it reads (trace readers, the CLI's directory
// scan and format probe, config files): never blocks, never reads a non-regular file.
// A plain open(O_RDONLY) of a FIFO blocks until a writer appears, and a read of a device or a
// directory never ends or fails late, so `kairos summarize DIR` with a FIFO in DIR used to
// hang forever. Here the open is O_NONBLOCK (returns at once for a FIFO), the type is checked
// on the open descriptor (no race with a rename between a stat and the open), and only then
// is O_NONBLOCK cleared so reads of the regular file behave normally.
// Threading: no shared state.
#ifndef KAIROS_SRC_INPUT_FILE_H_
#define KAIROS_SRC_INPUT_FILE_H_

#include <sys/stat.h>

#include <string>

#include "absl/status/statusor.h"

namespace kairos {

// Opens `path` read-only (O_CLOEXEC, O_NOCTTY; symlinks to regular files are followed) and
// returns the descriptor, which the caller closes. Errors, each one line naming the path:
//   NotFound            "<path>: No such file or directory"
//   PermissionDenied    "<path>: <strerror>" (any other open or fstat failure)
//   FailedPrecondition  "<path>: is a FIFO, not a regular file; refusing to read it"
//                       (likewise "a directory", "a character device", "a block device",
//                       "a socket"); the descriptor is closed.
// `st` (optional) receives the fstat result when the open succeeded, so a caller can tell a
// directory from a FIFO in a refusal, or use the size.
absl::StatusOr<int> OpenInputFile(const std::string& path, struct stat* st = nullptr);

// "a FIFO", "a directory", ... for a non-regular st_mode; "a regular file" otherwise.
const char* FileTypeName(mode_t mode);

}  // namespace kairos

#endif  // KAIROS_SRC_INPUT_FILE_H_
