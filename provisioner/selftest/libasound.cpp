// SPDX-License-Identifier: Apache-2.0
#include "provisioner/selftest/libasound.hpp"

namespace rtprov::selftest {

namespace {

RTPROV_DL_LOADER(LibAsound, load_libasound, "libasound.so.2", RTPROV_PACKAGE_LIBASOUND,
                 RTPROV_LIBASOUND_FUNCTIONS)

// alsa-lib's default handler prints "ALSA lib pcm.c:2666:(snd_pcm_open_noupdate) Unknown
// PCM ..." to stderr before returning the error (snd_lib_error_set_handler(3)).
void quiet(const char*, int, const char*, int, const char*, ...) {}

} // namespace

const LibAsound& libasound() {
    static const LibAsound& lib = []() -> const LibAsound& {
        const LibAsound& loaded = load_libasound();
        loaded.snd_lib_error_set_handler(&quiet);
        return loaded;
    }();
    return lib;
}

} // namespace rtprov::selftest
