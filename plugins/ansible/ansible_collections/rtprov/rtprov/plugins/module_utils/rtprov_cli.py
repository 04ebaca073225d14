# -*- coding: utf-8 -*-
# SPDX-License-Identifier: Apache-2.0
# Copyright: rtprov contributors
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Running the rtprov binary on the managed host and reading its --json outputs.

The outputs and their exit codes are documented in rtprov's docs/json.md: every one is
a JSON object whose 'schema' and 'schema_version' say what it is. Within a
schema_version keys are only added, so a reader checks both and ignores keys it does
not know."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

SCHEMA_VERSION = 1
# rtprov.selftest is at 2 since the underrun test (its 'passed' requires the 'audio' test);
# the reports rtprov kept before that are at 1, with no 'audio'.
SELFTEST_SCHEMA_VERSIONS = (1, 2)

# Exit codes from 'rtprov --help': 0 success, 1 failure (or a refused plan),
# 2 wrong usage, 3 a self-test or audit ran and did not pass, or status saw drift.
EXIT_NOT_PASSED = 3


def run(module, rtprov, args, accept=(0,), extra=None):
    """Runs rtprov with ARGS; returns (rc, stdout, stderr). An exit code outside
    ACCEPT fails the task with rtprov's own message and exit code, and EXTRA (a dict of
    results, such as changed=True once an apply has begun)."""
    cmd = [rtprov] + args
    rc, out, err = module.run_command(cmd)
    if rc not in accept:
        fail(module, cmd, rc, out, err, **(extra or {}))
    return rc, out, err


def fail(module, cmd, rc, out, err, msg=None, **extra):
    """Fails the task with MSG, by default what rtprov said on stderr (its
    'rtprov: error: ...' lines), and rtprov's exit code as rc."""
    message = msg or err.strip() or out.strip() or "rtprov exited with code %d" % rc
    module.fail_json(msg=message, rc=rc, cmd=cmd, stdout=out, stderr=err, **extra)


def parse(module, cmd, rc, out, err, schema, extra=None):
    """The JSON object rtprov printed, checked to be SCHEMA at schema_version 1."""
    extra = extra or {}
    try:
        doc = json.loads(out)
    except ValueError as e:
        module.fail_json(msg="rtprov printed no JSON for '%s': %s" % (" ".join(cmd), e),
                         rc=rc, cmd=cmd, stdout=out, stderr=err, **extra)
    if not isinstance(doc, dict) or doc.get("schema") != schema or \
            doc.get("schema_version") != SCHEMA_VERSION:
        module.fail_json(msg="expected rtprov's %s output at schema_version %d; this module "
                             "does not know what rtprov printed" % (schema, SCHEMA_VERSION),
                         rc=rc, cmd=cmd, stdout=out, stderr=err, **extra)
    return doc


def run_json(module, rtprov, args, schema, accept=(0,), extra=None):
    """Runs rtprov ARGS (which ask for JSON) and returns (rc, the parsed object)."""
    rc, out, err = run(module, rtprov, args, accept, extra)
    return rc, parse(module, [rtprov] + args, rc, out, err, schema, extra)


BOOT_CHECKS = ("cmdline", "kernel-preemption")


def reboot_required(audit):
    """Whether the running kernel lacks what the applied profile put into the boot
    configuration: the audit's 'cmdline' check (parameters not in /proc/cmdline) or its
    'kernel-preemption' check (the PREEMPT_RT kernel the profile asks for is not
    running) failed. These are the two things rtprov's own first boot reboots for."""
    return any(c.get("id") in BOOT_CHECKS and c.get("status") == "fail"
               for c in audit.get("checks", []))


def boot_unseen(audit):
    """What the audit could not see of those two (a 'warn': /proc/cmdline or the kernel's
    preemption mode unreadable), one line each: a reboot_required of false does not
    cover them."""
    return ["%s: %s" % (c.get("id"), c.get("reason")) for c in audit.get("checks", [])
            if c.get("id") in BOOT_CHECKS and c.get("status") == "warn"]
