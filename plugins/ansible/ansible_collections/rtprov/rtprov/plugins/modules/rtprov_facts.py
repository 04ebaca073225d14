#!/usr/bin/python
# -*- coding: utf-8 -*-
# SPDX-License-Identifier: Apache-2.0
# Copyright: rtprov contributors
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: rtprov_facts
short_description: The rtprov audit and the last self-test of the managed host, as facts
description:
  - Runs C(rtprov audit --json) on the running managed host (its threads, boot parameters,
    isolation, IRQs and RT_PUSH_IPI against the applied profile; it changes nothing) and
    reads the newest self-test report rtprov kept in C(/var/lib/rtprov/selftest/).
  - With I(selftest=true) it first runs a new self-test (C(rtprov selftest)), which then
    is the newest report.
  - A check or self-test that does not pass is a fact, not a task failure; assert on
    C(ansible_facts.rtprov.passed) to fail hosts that do not pass.
version_added: "0.1.0"
author: rtprov maintainers (!UNKNOWN)
requirements:
  - rtprov on the managed host's PATH
options:
  selftest:
    description:
      - Run C(rtprov selftest) first, which measures wake-up latency on the reserved and
        a housekeeping core and runs the PI-boost starvation probe. It reports changed, since it adds a
        report to the history. Not run in check mode.
    type: bool
    default: false
  selftest_duration:
    description:
      - Seconds per idle policy for I(selftest=true) (C(rtprov selftest --duration));
        when left out, the profile's C(selftest.duration_s).
    type: int
notes:
  - Supports check mode (without I(selftest), which it then skips).
seealso:
  - module: rtprov.rtprov.rtprov
"""

EXAMPLES = r"""
- name: Self-test, audit and gather both
  rtprov.rtprov.rtprov_facts:
    selftest: true
    selftest_duration: 30

- name: Fail the hosts that do not pass
  ansible.builtin.assert:
    that: ansible_facts.rtprov.passed
    fail_msg: "{{ ansible_facts.rtprov.problems | join('; ') }}"
"""

RETURN = r"""
ansible_facts:
  description: Facts under C(rtprov).
  returned: always
  type: complex
  contains:
    rtprov:
      description: The audit and the last self-test.
      type: complex
      contains:
        audit:
          description: C(rtprov audit --json) as printed (C(rtprov.audit) in rtprov's docs/json.md).
          type: dict
        selftest:
          description:
            - The newest kept self-test report (C(rtprov.selftest)), or null when none was
              ever run.
          type: dict
        selftest_file:
          description: The report's file, or null.
          type: str
        passed:
          description:
            - A profile is applied, the audit's C(result) is not C(fail) and the newest
              self-test passed.
          type: bool
        problems:
          description:
            - Why it did not pass, one line each, from the audit's failed checks and the
              self-test's verdict; empty when it passed.
          type: list
          elements: str
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.rtprov.rtprov.plugins.module_utils import rtprov_cli

# 'rtprov selftest --history' default; each report is named by its UTC start time
# (20261204T224406Z.json), so the newest sorts last.
HISTORY = "/var/lib/rtprov/selftest"


def newest_report(module):
    try:
        names = sorted(n for n in os.listdir(HISTORY) if n.endswith(".json"))
    except OSError:
        return None, None
    if not names:
        return None, None
    path = os.path.join(HISTORY, names[-1])
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        module.fail_json(msg="cannot read rtprov's self-test report '%s': %s" % (path, e))
    if doc.get("schema") != "rtprov.selftest" or \
            doc.get("schema_version") not in rtprov_cli.SELFTEST_SCHEMA_VERSIONS:
        module.fail_json(msg="'%s' is not an rtprov.selftest report at schema_version %s"
                             % (path, " or ".join(map(str, rtprov_cli.SELFTEST_SCHEMA_VERSIONS))))
    return doc, path


def main():
    module = AnsibleModule(
        argument_spec=dict(
            selftest=dict(type="bool", default=False),
            selftest_duration=dict(type="int"),
        ),
        required_by=dict(selftest_duration=["selftest"]),
        supports_check_mode=True,
    )
    p = module.params
    rtprov = module.get_bin_path("rtprov", required=True)
    changed = False
    if p["selftest"] and not module.check_mode:
        args = ["selftest"]
        if p["selftest_duration"] is not None:
            args += ["--duration", str(p["selftest_duration"])]
        # 3: it ran and did not pass; the report says why
        rtprov_cli.run(module, rtprov, args, accept=(0, rtprov_cli.EXIT_NOT_PASSED))
        changed = True
    dummy, audit = rtprov_cli.run_json(module, rtprov, ["audit", "--json"], "rtprov.audit",
                                       accept=(0, rtprov_cli.EXIT_NOT_PASSED))
    selftest, path = newest_report(module)
    problems = ["audit: %s: %s" % (c["id"], c["reason"])
                for c in audit["checks"] if c["status"] == "fail"]
    if audit.get("profile") is None:
        problems.append("audit: no profile applied (rtprov status): only the checks that hold "
                        "for every audio machine ran")
    if selftest is None:
        problems.append("self-test: none was run (rtprov selftest)")
    elif not selftest.get("passed"):
        failed = ["CPU %s (%s idle): max %s us, limit %s us" %
                  (c["cpu"], c["idle"], c["max_us"], c["threshold_us"])
                  for c in selftest.get("cores", []) if not c.get("passed")]
        probe = selftest.get("pi_probe")
        if probe and not probe.get("passed"):
            failed.append("PI-boost probe: worst wait %s us, limit %s us" %
                          (probe["worst_wait_us"], probe["limit_us"]))
        audio = selftest.get("audio")
        if audio and not audio.get("passed"):
            result = audio["result"]
            left = result.get("min_left_ms")
            failed.append("audio test on '%s': %s underruns, %s, at least %s ms needed%s" %
                          (result["device"], result["underruns"],
                           "no write measured what was left" if left is None
                           else "at worst %s ms left" % left,
                           audio["min_headroom_ms"],
                           "; stopped: " + result["stopped_because"]
                           if result.get("stopped_because") else ""))
        problems.append("self-test %s did not pass: %s" %
                        (path, "; ".join(failed) or "incomplete or interrupted"))
    facts = dict(audit=audit, selftest=selftest, selftest_file=path,
                 passed=not problems, problems=problems)
    module.exit_json(changed=changed, ansible_facts=dict(rtprov=facts))


if __name__ == "__main__":
    main()
