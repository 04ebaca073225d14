// SPDX-License-Identifier: Apache-2.0
#include "provisioner/boot/cmdline.hpp"

#include "tests/unit/catch.hpp"

using namespace rtprov::boot;

namespace {

const std::vector<std::string> k_keys = {"isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity"};

std::string merge(const std::string& current, const std::vector<KernelParam>& wanted,
                  const std::string& original = "", CmdlineScope scope = CmdlineScope::whole_text) {
    auto text = parse_cmdline_text(current, scope);
    auto before = original.empty() ? text.tokens : parse_cmdline_text(original, scope).tokens;
    return render(merge_cmdline(text, before, wanted, k_keys).text);
}

const std::vector<KernelParam> k_isolate = {{"isolcpus", "managed_irq,domain,3", false},
                                            {"irqaffinity", "0-2", false}};

} // namespace

TEST_CASE("tokens split at whitespace and keep quoted stretches together") {
    auto tokens = parse_cmdline("a=1  b\tc=\"x y\"\nd");
    REQUIRE(tokens.size() == 4);
    CHECK(tokens[2].text == "c=\"x y\"");
    CHECK(tokens[2].key() == "c");
    CHECK(tokens[2].value() == "x y"); // the quotes the kernel strips
    CHECK(tokens[1].key() == "b");
    CHECK_FALSE(tokens[1].value());
    CHECK(parse_cmdline("isolcpus=managed_irq,domain,3")[0].value() == "managed_irq,domain,3");
}

TEST_CASE("cmdline.txt edit keeps root=ROOTDEV and resize and appends at the end") {
    CHECK(merge("console=serial0,115200 console=tty1 root=ROOTDEV rootfstype=ext4 "
                "fsck.repair=yes rootwait resize",
                k_isolate) ==
          "console=serial0,115200 console=tty1 root=ROOTDEV rootfstype=ext4 fsck.repair=yes "
          "rootwait resize isolcpus=managed_irq,domain,3 irqaffinity=0-2");
}

TEST_CASE("cmdline.txt edit inserts before systemd.run= so Imager's first run keeps it") {
    CHECK(merge("console=tty1 root=PARTUUID=1234-02 rootwait quiet init=/usr/lib/x ds=nocloud "
                "cfg80211.ieee80211_regdom=DE systemd.run=/boot/firstrun.sh "
                "systemd.run_success_action=reboot systemd.unit=kernel-command-line.target",
                k_isolate) ==
          "console=tty1 root=PARTUUID=1234-02 rootwait quiet init=/usr/lib/x ds=nocloud "
          "cfg80211.ieee80211_regdom=DE isolcpus=managed_irq,domain,3 irqaffinity=0-2 "
          "systemd.run=/boot/firstrun.sh systemd.run_success_action=reboot "
          "systemd.unit=kernel-command-line.target");
}

TEST_CASE("rtprov's keys are replaced in place and duplicates dropped") {
    CHECK(merge("a isolcpus=1 b isolcpus=2 c", k_isolate) ==
          "a isolcpus=managed_irq,domain,3 b c irqaffinity=0-2");
}

TEST_CASE("a foreign value for a key rtprov sets is reported with both values") {
    auto text = parse_cmdline_text("quiet isolcpus=1", CmdlineScope::whole_text);
    auto merged = merge_cmdline(text, text.tokens, k_isolate, k_keys);
    REQUIRE(merged.foreign.size() == 1);
    CHECK(merged.foreign[0].foreign == "isolcpus=1");
    CHECK(merged.foreign[0].ours == "isolcpus=managed_irq,domain,3");
}

TEST_CASE("an equal value written differently is not foreign") {
    auto text = parse_cmdline_text("isolcpus=domain,managed_irq,3 irqaffinity=0,1,2",
                                   CmdlineScope::whole_text);
    CHECK(merge_cmdline(text, text.tokens, k_isolate, k_keys).foreign.empty());
    CHECK(same_value("nohz_full", "3,2", "2-3"));
    CHECK_FALSE(same_value("nohz_full", "3", "2-3"));
    CHECK_FALSE(same_value("console", "tty1", "tty2"));
}

TEST_CASE("re-applying with a changed profile replaces rtprov's tokens and nothing else") {
    std::string original = "console=tty1 root=ROOTDEV rootwait";
    std::string first = merge(original,
                              {{"isolcpus", "domain,2-3", false},
                               {"nohz_full", "2-3", false},
                               {"irqaffinity", "0-1", false}},
                              original);
    CHECK(first == "console=tty1 root=ROOTDEV rootwait isolcpus=domain,2-3 nohz_full=2-3 "
                   "irqaffinity=0-1");
    std::string edited = "quiet " + first + " splash"; // someone else edits too
    CHECK(
        merge(edited, {{"isolcpus", "domain,3", false}, {"irqaffinity", "0-2", false}}, original) ==
        "quiet console=tty1 root=ROOTDEV rootwait isolcpus=domain,3 irqaffinity=0-2 splash");
}

TEST_CASE("a key rtprov no longer wants gets its original value back") {
    std::string original = "root=x isolcpus=1";
    std::string applied = merge(original, k_isolate, original);
    CHECK(applied == "root=x isolcpus=managed_irq,domain,3 irqaffinity=0-2");
    CHECK(merge(applied, {}, original) == "root=x isolcpus=1");
}

TEST_CASE("parsing and rendering a command-line file gives it back byte for byte") {
    for (const char* text : {"", "\n", "a", " a  b\t c\r\n", "a b\nsecond line\n", "x=\"a b\" y\n"})
        for (CmdlineScope scope : {CmdlineScope::first_line, CmdlineScope::whole_text})
            CHECK(render(parse_cmdline_text(text, scope)) == text);
    CmdlineText lines = parse_cmdline_text("a b\nc d\n", CmdlineScope::first_line);
    CHECK(lines.tokens.size() == 2);
    CHECK(lines.rest == "c d\n");
}

TEST_CASE("an edit changes only rtprov's tokens: spacing, CR, other lines and the end stay") {
    CHECK(merge("a  b\r\n", k_isolate, "", CmdlineScope::first_line) ==
          "a  b isolcpus=managed_irq,domain,3 irqaffinity=0-2\r\n");
    CHECK(merge("a b\nnot read\n", k_isolate, "", CmdlineScope::first_line) ==
          "a b isolcpus=managed_irq,domain,3 irqaffinity=0-2\nnot read\n");
    CHECK(merge("a\tb", k_isolate) == "a\tb isolcpus=managed_irq,domain,3 irqaffinity=0-2");
    CHECK(merge("", k_isolate) == "isolcpus=managed_irq,domain,3 irqaffinity=0-2");
    CHECK(merge("isolcpus=1  quiet\n", {}, "quiet\n") == "quiet\n");
    // Inserted before systemd.run, and taken out again, with the spacing as it was.
    const std::string imager = "a  systemd.run=/boot/firstrun.sh\n";
    const std::string applied = merge(imager, k_isolate, imager);
    CHECK(applied == "a isolcpus=managed_irq,domain,3 irqaffinity=0-2  "
                     "systemd.run=/boot/firstrun.sh\n");
    CHECK(merge(applied, {}, imager) == imager);
}

TEST_CASE("rollback's edit takes rtprov's part out and keeps what others changed since") {
    // pi-gen's export-image rewrites root=ROOTDEV after rtprov ran.
    const std::string pigen = "console=serial0,115200 console=tty1 root=ROOTDEV rootfstype=ext4 "
                              "fsck.repair=yes rootwait resize\n";
    const std::string applied = merge(pigen, k_isolate, pigen, CmdlineScope::first_line);
    std::string exported = applied;
    exported.replace(exported.find("ROOTDEV"), 7, "PARTUUID=6c586e13-02");
    std::string pigen_alone = pigen;
    pigen_alone.replace(pigen_alone.find("ROOTDEV"), 7, "PARTUUID=6c586e13-02");
    CHECK(merge(exported, {}, pigen, CmdlineScope::first_line) == pigen_alone);
    // An original value of an owned key comes back in place.
    CHECK(merge("a isolcpus=managed_irq,domain,3 b c\n", {}, "a isolcpus=1 b\n") ==
          "a isolcpus=1 b c\n");
}

TEST_CASE("rtprov's part and others' edits are told apart") {
    auto original = parse_cmdline("root=ROOTDEV quiet isolcpus=1");
    auto current = parse_cmdline("root=PARTUUID=1 isolcpus=3 irqaffinity=0-2 quiet splash");
    CHECK(owned_part(current, k_keys) == std::vector<std::string>{"isolcpus=3", "irqaffinity=0-2"});
    ForeignEdits edits = foreign_edits(original, current, k_keys);
    CHECK(edits.removed == std::vector<std::string>{"root=ROOTDEV"});
    CHECK(edits.added == std::vector<std::string>{"root=PARTUUID=1", "splash"});
}

TEST_CASE("whitespace is what the kernel's isspace() says, \\v and \\f included") {
    CHECK(parse_cmdline("a\vb\fc").size() == 3);
    CHECK(parse_cmdline_text("a \"b", CmdlineScope::whole_text).unclosed_quote);
    CHECK_FALSE(parse_cmdline_text("a \"b c\"", CmdlineScope::whole_text).unclosed_quote);
}

TEST_CASE("the first isolcpus= and nohz_full= count, the last of everything else") {
    auto tokens = parse_cmdline("isolcpus=1 irqaffinity=0 isolcpus=3 irqaffinity=0-2 threadirqs");
    CHECK(not_in_effect(tokens, {"isolcpus", "3", false}) ==
          "'isolcpus=3' is rejected: the kernel keeps the first isolcpus=, 'isolcpus=1'");
    CHECK_FALSE(not_in_effect(tokens, {"isolcpus", "1", false}));
    CHECK_FALSE(not_in_effect(tokens, {"irqaffinity", "0-2", false}));
    CHECK(not_in_effect(tokens, {"irqaffinity", "0", false}) ==
          "'irqaffinity=0' is rejected: the kernel keeps the last irqaffinity=, 'irqaffinity=0-2'");
    CHECK(not_in_effect(tokens, {"nohz_full", "3", false}) == "'nohz_full=3' is missing");
    CHECK(not_in_effect(tokens, {"rcu_nocbs", "3", false}) == "'rcu_nocbs=3' is missing");
    CHECK_FALSE(not_in_effect(tokens, {"threadirqs", "", true}));
    CHECK(not_in_effect(parse_cmdline("isolcpus=2"), {"isolcpus", "3", false}) ==
          "'isolcpus=2' instead of 'isolcpus=3'");
    CHECK(repeat_rule("nohz_full") == RepeatRule::first_counts);
    CHECK(repeat_rule("rcu_nocbs") == RepeatRule::last_counts);
}

TEST_CASE("keys and values are read as the kernel reads them") {
    auto tokens = parse_cmdline("\"isolcpus=0\" nohz-full=1 dyndbg=\"+p\"");
    CHECK(tokens[0].key() == "isolcpus");
    CHECK(tokens[0].value() == "0");
    CHECK(tokens[1].key() == "nohz_full");
    CHECK(tokens[2].value() == "+p");
    // A quoted foreign isolcpus= first is the one the kernel keeps.
    CHECK(not_in_effect(parse_cmdline("\"isolcpus=0\" isolcpus=3"), {"isolcpus", "3", false}) ==
          "'isolcpus=3' is rejected: the kernel keeps the first isolcpus=, '\"isolcpus=0\"'");
}

TEST_CASE("what follows '--' is init's: never a kernel parameter, never where rtprov writes") {
    CHECK(merge("a -- single\n", k_isolate) ==
          "a isolcpus=managed_irq,domain,3 irqaffinity=0-2 -- single\n");
    CHECK(merge("a -- isolcpus=1\n", k_isolate) ==
          "a isolcpus=managed_irq,domain,3 irqaffinity=0-2 -- isolcpus=1\n");
    auto after = parse_cmdline("a -- isolcpus=managed_irq,domain,3");
    CHECK(not_in_effect(after, {"isolcpus", "managed_irq,domain,3", false}) ==
          "'isolcpus=managed_irq,domain,3' is missing");
    CHECK(owned_part(after, k_keys).empty());
}

TEST_CASE("rollback brings back no init argument as a kernel parameter (found by fuzzing)") {
    // The original had isolcpus=1 only after '--', as an argument of init: rtprov's
    // isolcpus= goes before '--', and rolling it back removes it and adds nothing.
    const std::string original = "root=/dev/vda -- quiet isolcpus=1\n";
    const std::string applied = merge(original, k_isolate, original);
    CHECK(applied == "root=/dev/vda isolcpus=managed_irq,domain,3 irqaffinity=0-2 -- quiet "
                     "isolcpus=1\n");
    CHECK(merge(applied, {}, original) == original);
}
