// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "provisioner/core/shared_library.hpp"

#include <alsa/asoundlib.h>

// alsa-lib, the library every Linux player plays through (MPD, aplay, squeezelite), for
// the underrun test; loaded when the test first plays (core::SharedLibrary says why it is
// not linked). The package recommends it, not depends on it: only 'selftest --audio'
// needs it (cmake/package.cmake).
namespace rtprov::selftest {

#define RTPROV_LIBASOUND_FUNCTIONS(X)                                                              \
    X(snd_card_get_name)                                                                           \
    X(snd_ctl_card_info)                                                                           \
    X(snd_ctl_card_info_free)                                                                      \
    X(snd_ctl_card_info_get_driver)                                                                \
    X(snd_ctl_card_info_malloc)                                                                    \
    X(snd_ctl_close)                                                                               \
    X(snd_ctl_open)                                                                                \
    X(snd_lib_error_set_handler)                                                                   \
    X(snd_output_buffer_open)                                                                      \
    X(snd_output_buffer_string)                                                                    \
    X(snd_output_close)                                                                            \
    X(snd_pcm_avail_delay)                                                                         \
    X(snd_pcm_close)                                                                               \
    X(snd_pcm_drop)                                                                                \
    X(snd_pcm_dump)                                                                                \
    X(snd_pcm_hw_params)                                                                           \
    X(snd_pcm_hw_params_any)                                                                       \
    X(snd_pcm_hw_params_free)                                                                      \
    X(snd_pcm_hw_params_get_buffer_size)                                                           \
    X(snd_pcm_hw_params_get_channels_max)                                                          \
    X(snd_pcm_hw_params_get_channels_min)                                                          \
    X(snd_pcm_hw_params_get_period_size)                                                           \
    X(snd_pcm_hw_params_get_rate_max)                                                              \
    X(snd_pcm_hw_params_get_rate_min)                                                              \
    X(snd_pcm_hw_params_malloc)                                                                    \
    X(snd_pcm_hw_params_set_access)                                                                \
    X(snd_pcm_hw_params_set_buffer_size_near)                                                      \
    X(snd_pcm_hw_params_set_channels)                                                              \
    X(snd_pcm_hw_params_set_format)                                                                \
    X(snd_pcm_hw_params_set_period_size_near)                                                      \
    X(snd_pcm_hw_params_set_rate_near)                                                             \
    X(snd_pcm_hw_params_set_rate_resample)                                                         \
    X(snd_pcm_hw_params_test_format)                                                               \
    X(snd_pcm_info)                                                                                \
    X(snd_pcm_info_free)                                                                           \
    X(snd_pcm_info_get_card)                                                                       \
    X(snd_pcm_info_malloc)                                                                         \
    X(snd_pcm_nonblock)                                                                            \
    X(snd_pcm_open)                                                                                \
    X(snd_pcm_prepare)                                                                             \
    X(snd_pcm_start)                                                                               \
    X(snd_pcm_state)                                                                               \
    X(snd_pcm_sw_params)                                                                           \
    X(snd_pcm_sw_params_current)                                                                   \
    X(snd_pcm_sw_params_free)                                                                      \
    X(snd_pcm_sw_params_malloc)                                                                    \
    X(snd_pcm_sw_params_set_avail_min)                                                             \
    X(snd_pcm_sw_params_set_start_threshold)                                                       \
    X(snd_pcm_type)                                                                                \
    X(snd_pcm_wait)                                                                                \
    X(snd_pcm_writei)

RTPROV_DL_STRUCT(LibAsound, RTPROV_LIBASOUND_FUNCTIONS)

// Loads libasound.so.2 at the first call, and silences its messages on stderr (library
// code does not print; every failure comes back as an error code, which rtprov words);
// throws rtprov::Error saying what to install.
const LibAsound& libasound();

} // namespace rtprov::selftest
