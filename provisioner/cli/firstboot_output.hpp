// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string_view>

// Where the messages of 'rtprov firstboot' go. Under rtprov-firstboot.service stdout and
// stderr are the unit's journal stream, so a message printed there and also sent as a
// structured entry would be logged twice. Pure.
namespace rtprov::cli {

// True when $JOURNAL_STREAM ('journal_stream', "device:inode" in decimal, systemd.exec(5))
// names the stream whose fstat(2) gave 'device' and 'inode': the output is the journal.
// An empty or malformed value is false. systemd.exec(5) says to compare rather than only
// test whether the variable is set, since a child may have its output redirected while
// it inherits the variable.
bool is_journal_stream(std::string_view journal_stream, std::uint64_t device, std::uint64_t inode);

// How a first-boot message that has a structured journal entry (MESSAGE_ID=) is told.
struct Delivery {
    bool send = false;  // as the structured entry (sd_journal_send)
    bool print = false; // on stdout
};

// The entry is always sent, so that 'journalctl MESSAGE_ID=...' finds it; the text is
// printed only when stdout is not the journal (a terminal, a file), so each message
// reaches the journal once.
Delivery deliver(bool stdout_is_journal);

} // namespace rtprov::cli
