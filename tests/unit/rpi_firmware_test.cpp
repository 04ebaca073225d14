// SPDX-License-Identifier: Apache-2.0
#include "provisioner/boot/rpi_firmware.hpp"

#include "tests/unit/catch.hpp"

using namespace rtprov::boot;

TEST_CASE("cmdline= and os_prefix= in sections that apply to a Pi 4 are honoured") {
    const std::string text = "arm_64bit=1\n[pi5]\ncmdline=pi5.txt\n[pi4]\nos_prefix=rt/\n"
                             "[all]\ncmdline=mine.txt\n[pi5]\nos_prefix=five/\n";
    auto s = parse_config_txt(text, "pi4");
    CHECK(s.cmdline_file == "mine.txt");
    CHECK(s.os_prefix == "rt/");
    CHECK(cmdline_txt_path("/boot/firmware", s) == "/boot/firmware/rt/mine.txt");
    CHECK(cmdline_txt_path("/boot/firmware", parse_config_txt("dtparam=audio=on\n", "pi4")) ==
          "/boot/firmware/cmdline.txt");
    // the same file read for a Pi 5: its own sections, not the Pi 4's
    auto five = parse_config_txt(text, "pi5");
    CHECK(five.cmdline_file == "mine.txt");
    CHECK(five.os_prefix == "five/");
}

TEST_CASE("the RT block goes after the trailing [all] and ends in [all] again") {
    std::string config = "arm_64bit=1\n[cm4]\notg_mode=1\n\n[all]\n";
    std::string edited = edit_config_txt(config, std::string("kernel8_rt.img"), "pi4", "pi4");
    CHECK(edited == config + "# >>> rtprov (profile 'pi4'): boot the PREEMPT_RT kernel\n"
                             "[pi4]\nkernel=kernel8_rt.img\ninitramfs initramfs8_rt followkernel\n"
                             "[all]\n# <<< rtprov\n");
    for (std::size_t start = 0, nl; (nl = edited.find('\n', start)) != std::string::npos;
         start = nl + 1)
        CHECK(nl - start < 98); // config.txt ignores what is past 98 characters
    CHECK(edit_config_txt(edited, std::string("kernel8_rt.img"), "pi4", "pi4") == edited);
    CHECK(edit_config_txt(edited, std::nullopt, "pi4", "pi4") == config);
}

TEST_CASE("config.txt without rtprov's block is kept byte for byte") {
    std::string config = "a=1\r\n# comment\n[all]"; // no final newline
    CHECK(edit_config_txt(config, std::nullopt, "pi4", "pi4") == config);
}

TEST_CASE("on a Pi 5 the RT block goes under [pi5]") {
    CHECK(edit_config_txt("arm_64bit=1\n", std::string("kernel8_rt.img"), "pi5", "pi5") ==
          "arm_64bit=1\n# >>> rtprov (profile 'pi5'): boot the PREEMPT_RT kernel\n"
          "[pi5]\nkernel=kernel8_rt.img\ninitramfs initramfs8_rt followkernel\n[all]\n"
          "# <<< rtprov\n");
}

TEST_CASE("foreign kernel= lines are found in sections that apply to a Pi 4") {
    std::string config = "kernel=a.img\n[pi5]\nkernel=b.img\n[all]\n" +
                         edit_config_txt("", std::string("kernel8_rt.img"), "pi4", "pi4");
    CHECK(foreign_kernel_lines(config, "pi4") == std::vector<std::string>{"kernel=a.img"});
    CHECK(foreign_kernel_lines(config, "pi5") ==
          std::vector<std::string>{"kernel=a.img", "kernel=b.img"});
    CHECK(initramfs_for("kernel8_rt.img") == "initramfs8_rt");
    CHECK(initramfs_for("kernel_2712.img") == "initramfs_2712");
}
