// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/shared_library.hpp"

#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
// sd-journal.h otherwise makes sd_journal_sendv a macro for its _with_location variant;
// the entry's CODE_FILE/CODE_LINE would name this file anyway.
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include <string>
#include <vector>

namespace rtprov::systemd {

// The libsystemd functions rtprov uses, loaded when a command first talks to systemd
// (core::SharedLibrary says why it is not linked).
#define RTPROV_LIBSYSTEMD_FUNCTIONS(X)                                                             \
    X(sd_bus_call)                                                                                 \
    X(sd_bus_call_method)                                                                          \
    X(sd_bus_error_free)                                                                           \
    X(sd_bus_flush_close_unref)                                                                    \
    X(sd_bus_message_append)                                                                       \
    X(sd_bus_message_append_array)                                                                 \
    X(sd_bus_message_close_container)                                                              \
    X(sd_bus_message_new_method_call)                                                              \
    X(sd_bus_message_open_container)                                                               \
    X(sd_bus_message_unref)                                                                        \
    X(sd_bus_open_system)                                                                          \
    X(sd_journal_sendv)                                                                            \
    X(sd_notify)

RTPROV_DL_STRUCT(LibSystemd, RTPROV_LIBSYSTEMD_FUNCTIONS)

// Loads libsystemd.so.0 at the first call; throws rtprov::Error saying what to install.
const LibSystemd& libsystemd();

// One structured journal entry, each field "NAME=value" (systemd.journal-fields(7)),
// MESSAGE= among them, with the caller's CODE_FILE, CODE_LINE and CODE_FUNC. Never
// throws: false when it was not sent (libsystemd missing, or the journal refused), so
// the caller can print the message instead.
// (The caller's place comes from the compiler's __builtin_FILE/LINE/FUNCTION, which GCC
// and clang evaluate at the call as default arguments; clang 14 with libstdc++ 12 has no
// std::source_location.)
bool journal_send(const std::vector<std::string>& fields, const char* file = __builtin_FILE(),
                  int line = __builtin_LINE(), const char* function = __builtin_FUNCTION());

// sd_notify(3) of "STATUS=<status>" (a newline in it becomes a space): progress for
// 'systemctl status'; a no-op where no service manager listens or libsystemd is missing.
void notify(const std::string& status);

} // namespace rtprov::systemd
