// SPDX-License-Identifier: Apache-2.0
#include "provisioner/profile/schema.hpp"

#include "provisioner/core/error.hpp"
#include "tests/unit/catch.hpp"

#include <yaml-cpp/yaml.h>

using namespace rtprov;
using namespace rtprov::profile;

namespace {

// A toy record with a key of each kind and a nested map.
struct Toy {
    std::string title = "t";
    std::vector<std::string> tags;
    bool on = false;
    std::optional<int> level;
    unsigned size = 1;
    core::IoClass io = core::IoClass::none;
};

const schema::Keys<Toy>& toy_keys() {
    using namespace schema;
    static const Keys<Toy> k_keys = {
        text<Toy>("title", RTPROV_FIELD(Toy, title), non_empty),
        strings<Toy>("a.tags", RTPROV_FIELD(Toy, tags)),
        flag<Toy>("a.b.on", RTPROV_FIELD(Toy, on)),
        number<Toy>("a.b.level", RTPROV_FIELD(Toy, level), 0, 9),
        {"size",
         [](Reader& c, const Tree& t, const std::string& shown, Toy& toy) {
             if (auto n = c.integer(t, shown, 1, 100))
                 toy.size = unsigned(*n);
         },
         [](YAML::Emitter& out, const Toy& toy) { out << toy.size; },
         {},
         "how big it is"},
        choice<Toy>("io", RTPROV_FIELD(Toy, io)),
    };
    return k_keys;
}

struct Read {
    Toy toy;
    std::vector<std::string> problems;
    std::map<std::string, core::Origin, std::less<>> origins;
};

Read read_toy(const std::string& yaml) {
    Read out;
    std::vector<core::ProfileProblem> problems;
    Tree tree = parse_yaml(yaml, "toy.yaml", problems);
    schema::Reader reader(problems, "toy: ", &out.origins);
    schema::read(reader, tree, "toy", "", toy_keys(), out.toy);
    for (const core::ProfileProblem& p : problems)
        out.problems.push_back(p.origin.to_string() + ": " + p.message);
    return out;
}

std::string write_toy(const Toy& toy) {
    YAML::Emitter out;
    schema::write(out, toy_keys(), toy);
    return out.c_str();
}

} // namespace

TEST_CASE("a schema reads each key by its dotted path and records where it was") {
    Read r = read_toy("title: x\na:\n  tags: [p, q]\n  b:\n    on: true\n    level: 3\n"
                      "size: 7\nio: idle\n");
    CHECK(r.problems.empty());
    CHECK(r.toy.title == "x");
    CHECK(r.toy.tags == std::vector<std::string>{"p", "q"});
    CHECK(r.toy.on);
    CHECK(r.toy.level == 3);
    CHECK(r.toy.size == 7u);
    CHECK(r.toy.io == core::IoClass::idle);
    CHECK(r.origins.at("a.b.level").to_string() == "toy.yaml:6:12");
    CHECK(r.origins.at("size").to_string() == "toy.yaml:7:7");
}

TEST_CASE("a schema reports every problem at once, at each level, with did-you-mean") {
    Read r = read_toy("titel: x\na:\n  tag: [p]\n  b:\n    on: maybe\n    level: 12\n"
                      "io: fast\nx: 1\n");
    CHECK(r.problems ==
          std::vector<std::string>{
              "toy.yaml:1:1: toy: unknown key 'titel', did you mean 'title'?",
              "toy.yaml:8:1: toy: unknown key 'x'; known keys: title, a, size, io",
              "toy.yaml:3:3: toy: unknown key 'tag', did you mean 'tags'?",
              "toy.yaml:5:9: toy: 'a.b.on' must be true or false, not 'maybe'",
              "toy.yaml:6:12: toy: 'a.b.level' is 12, outside 0-9",
              "toy.yaml:1:1: toy: needs 'size', how big it is",
              "toy.yaml:7:5: toy: 'io' must be one of 'none', 'realtime', 'best-effort', "
              "'idle', not 'fast'"});
    CHECK(read_toy("size: 1\na: [1]\n").problems ==
          std::vector<std::string>{"toy.yaml:2:4: toy: 'a' must be a map of keys"});
    CHECK(read_toy("size: 1\ntitle: ''\n").problems ==
          std::vector<std::string>{"toy.yaml:2:8: toy: 'title' holds '': it must not be empty"});
}

TEST_CASE("a schema writes its record back in table order, optional keys only when set") {
    Toy toy;
    toy.tags = {"p"};
    CHECK(write_toy(toy) == "title: t\na:\n  tags: [p]\n  b:\n    on: false\nsize: 1\nio: none");
    toy.level = 4;
    const std::string yaml = write_toy(toy);
    CHECK(yaml ==
          "title: t\na:\n  tags: [p]\n  b:\n    on: false\n    level: 4\nsize: 1\nio: none");
    Read back = read_toy(yaml);
    CHECK(back.problems.empty());
    CHECK(write_toy(back.toy) == yaml);
}

TEST_CASE("the schema's paths are its keys, in order") {
    CHECK(schema::paths(toy_keys()) ==
          std::vector<std::string>{"title", "a.tags", "a.b.on", "a.b.level", "size", "io"});
}

TEST_CASE("a required key given as null is missing, and a flood of problems is cut") {
    CHECK(read_toy("size: ~\n").problems ==
          std::vector<std::string>{"toy.yaml:1:1: toy: needs 'size', how big it is"});
    std::string flood = "size: 1\n";
    for (int i = 0; i < 150; ++i)
        flood += "k" + std::to_string(i) + ": 1\n";
    std::vector<core::ProfileProblem> problems;
    for (const std::string& line : read_toy(flood).problems)
        problems.push_back({{}, line});
    REQUIRE(problems.size() == 150);
    try {
        schema::throw_problems(problems);
    } catch (const Error& e) {
        const std::string text = e.what();
        CHECK(std::count(text.begin(), text.end(), '\n') == 100);
        CHECK(text.ends_with("\n... and 50 more problems; fix these first"));
    }
}
