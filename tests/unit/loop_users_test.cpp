// SPDX-License-Identifier: Apache-2.0
#include "provisioner/target/loop_users.hpp"

#include "tests/unit/catch.hpp"

using namespace rtprov::target;

TEST_CASE("waiting for loop devices to detach checks once more after the last pause") {
    int calls = 0, pauses = 0;
    auto attached_until = [&](int free_at) {
        return [&calls, free_at] {
            ++calls;
            return calls >= free_at ? std::vector<std::string>{}
                                    : std::vector<std::string>{"/dev/loop3"};
        };
    };
    // freed just after the last pause: seen
    CHECK(wait_until_detached(attached_until(3), 3, [&] { ++pauses; }).empty());
    CHECK(calls == 3);
    CHECK(pauses == 2);
    // never freed: 3 checks, no pause after the last
    calls = pauses = 0;
    CHECK(wait_until_detached(attached_until(10), 3, [&] { ++pauses; }) ==
          std::vector<std::string>{"/dev/loop3"});
    CHECK(calls == 3);
    CHECK(pauses == 2);
    // freed at once: no pause
    calls = pauses = 0;
    CHECK(wait_until_detached(attached_until(1), 3, [&] { ++pauses; }).empty());
    CHECK(pauses == 0);
}

TEST_CASE("every loop device on a file in the image is named, with the one command that frees "
          "them all") {
    CHECK(inner_loops_text({"/dev/loop5"}) ==
          "/dev/loop5 has a file in the image attached: 'losetup -d /dev/loop5' frees it");
    CHECK(inner_loops_text({"/dev/loop5", "/dev/loop6"}) ==
          "/dev/loop5, /dev/loop6 have a file in the image attached: 'losetup -d /dev/loop5 "
          "/dev/loop6' frees them");
}

TEST_CASE("a swap file in the image is named by its path in its file system, with how to turn "
          "it off through a mount of that one") {
    CHECK(image_swap_text({"/swapfile", "/swapfile", "/dev/loop5"}) ==
          "the image's swap file '/swapfile' is on: 'd=$(mktemp -d) && mount /dev/loop5 \"$d\" "
          "&& swapoff \"$d\"/swapfile && umount \"$d\" && rmdir \"$d\"' turns it off through a "
          "mount of its file system");
    CHECK(image_swap_text({"/run/rtprov/image/7/var/swap file", "/var/swap file", "/dev/loop5"}) ==
          "the image's swap file '/var/swap file' (/proc/swaps: "
          "'/run/rtprov/image/7/var/swap file') is on: 'd=$(mktemp -d) && mount /dev/loop5 "
          "\"$d\" && swapoff \"$d\"'/var/swap file' && umount \"$d\" && rmdir \"$d\"' turns it "
          "off through a mount of its file system");
}
