// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>

// Fields one measuring thread writes while the controlling thread may read them (a soak
// run's summaries): every access is a relaxed atomic through std::atomic_ref. With one
// writer, the writer's read-modify-write needs no locked instruction: on x86-64 and arm64
// these are plain loads and stores, as cheap as the non-atomic ones in the measuring loop.
namespace rtprov::selftest {

template <typename T> void relaxed_store(T& field, T value) noexcept {
    static_assert(std::atomic_ref<T>::is_always_lock_free);
    std::atomic_ref<T>(field).store(value, std::memory_order_relaxed);
}

template <typename T> T relaxed_load(const T& field) noexcept {
    // atomic_ref<const T> is C++26; a load does not write.
    return std::atomic_ref<T>(const_cast<T&>(field)).load(std::memory_order_relaxed);
}

} // namespace rtprov::selftest
