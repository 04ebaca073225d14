// SPDX-License-Identifier: Apache-2.0
#pragma once

// RTPROV_SANITIZED is 1 in a build with AddressSanitizer or ThreadSanitizer (GCC defines
// __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__, clang answers __has_feature), else 0. Some
// behaviour differs there: their mlockall is a no-op that succeeds, and their operator new
// aborts instead of throwing std::bad_alloc.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RTPROV_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RTPROV_SANITIZED 1
#endif
#endif
#ifndef RTPROV_SANITIZED
#define RTPROV_SANITIZED 0
#endif
