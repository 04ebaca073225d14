#!/usr/bin/python
# -*- coding: utf-8 -*-
# SPDX-License-Identifier: Apache-2.0
# Copyright: rtprov contributors
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: rtprov
short_description: Apply or roll back an rtprov board profile on the managed host
description:
  - Runs the C(rtprov) binary on the managed host to make it real-time ready from a board
    profile (reserved cores, pinning, real-time priorities, boot parameters), or to undo
    that byte for byte.
  - The module first runs C(rtprov plan --json); it runs C(rtprov apply) only when the plan
    changes or retires a file or has a command to run (such as an C(update-grub) the last
    apply did not finish, which C(rtprov status) shows as pending), so C(changed) is true
    only when files changed or a command ran.
  - In check mode it runs only C(rtprov plan --json) (or C(rtprov status --json) to roll
    back) and reports what would change. In diff mode it shows the plan's unified diffs.
  - Failures carry the message rtprov printed and its exit code. When C(rtprov apply) or
    C(rtprov rollback) fails, C(changed) says whether it changed anything before it
    stopped (C(rtprov status --json) before and after differ; an C(apply --live) that
    cannot reach systemd keeps its files written and recorded), with the C(changes).
version_added: "0.1.0"
author: rtprov maintainers (!UNKNOWN)
requirements:
  - rtprov on the managed host's PATH (the Debian package installs C(/usr/bin/rtprov))
options:
  profile:
    description:
      - The profile's name (see C(rtprov profiles)) or a C(.yaml) file on the managed host.
      - Required when I(state=applied).
    type: str
  set:
    description:
      - Profile keys to override, each passed to rtprov as C(--set KEY=VALUE), such as
        C(tuning.cores.reserved=2-3). rtprov reads VALUE as YAML; strings are passed as
        they are, other values (C(true), C(45), C([domain])) as JSON, and a null value
        removes the key.
      - Only with I(state=applied).
    type: dict
    default: {}
  state:
    description:
      - C(applied) applies the profile; a second run changes nothing.
      - C(rolled_back) restores every file rtprov changed and removes what it created
        (C(rtprov rollback)); nothing to do when no profile is applied.
    type: str
    choices: [applied, rolled_back]
    default: applied
  trial:
    description:
      - Write the boot configuration as a trial (C(rtprov apply --trial)); only the next
        boot uses the new kernel and parameters, and rtprov-trial.service makes them the
        default when that boot passes the self-test and audit, else the host boots the
        previous configuration again. GRUB, systemd-boot and the Raspberry Pi;
        C(rtprov trial status) shows where it stands.
      - Only with I(state=applied) and I(live=true). An image root (I(root)) is refused
        before anything runs, as its trial would be its first boot, which only a GRUB
        C(grub.cfg) made now with the image's block devices can arm, and an image root on
        the managed host usually has none; leave the trial to the image's first boot
        (its C(trial) key in C(/etc/rtprov/firstboot.yaml), true by default).
    type: bool
    default: false
  force:
    description:
      - With I(state=rolled_back), restore the originals also over files changed by hand
        since rtprov wrote them (C(rtprov rollback --force)); the hand edits are lost.
        Without it the module fails with rtprov's refusal, naming those files, and changes
        nothing (C(rollback_refused) of C(rtprov status --json)).
    type: bool
    default: false
  live:
    description:
      - Work on the running managed host (C(rtprov --live)); the boot configuration is
        regenerated now, and I(reboot_required) says whether a reboot is still needed.
      - When false, work offline on the image root I(root) on the managed host.
    type: bool
    default: false
  root:
    description:
      - The image root on the managed host to work on offline (C(rtprov --root)), not
        C(/) (the running host is I(live=true)).
      - Required with I(live=false), not allowed with I(live=true).
    type: path
notes:
  - Supports check mode and diff mode.
  - The JSON rtprov prints is documented in rtprov's C(docs/json.md); the module checks
    its C(schema) and C(schema_version).
seealso:
  - module: rtprov.rtprov.rtprov_facts
"""

EXAMPLES = r"""
- name: Apply the x86 Debian 13 profile to the running host
  rtprov.rtprov.rtprov:
    profile: x86-debian13
    set:
      tuning.cores.reserved: "2-3"
    live: true
  register: rt

- name: Reboot when boot parameters or the kernel changed
  ansible.builtin.reboot:
  when: rt.reboot_required

- name: Try the new boot configuration for one boot only
  rtprov.rtprov.rtprov:
    profile: x86-debian13
    live: true
    trial: true

- name: Apply offline to an image root mounted on the build host
  rtprov.rtprov.rtprov:
    profile: pi4
    root: /mnt/image

- name: Undo it
  rtprov.rtprov.rtprov:
    state: rolled_back
    live: true
"""

RETURN = r"""
changes:
  description:
    - The files rtprov wrote (or in check mode would write), as in the C(changes) of
      C(rtprov plan --json), without their diffs. Empty when nothing changed.
    - For I(state=rolled_back), the files the rollback restored or removed, as in the
      C(files) of C(rtprov status --json).
  returned: always
  type: list
  elements: dict
  sample: [{"path": "/etc/default/grub.d/90-rtprov.cfg", "action": "create",
            "reason": "the kernel parameters", "mode": "0644", "uid": 0, "gid": 0,
            "sha256": "da7b..."}]
retired:
  description: Files an earlier apply wrote that the profile no longer wants (restored or removed).
  returned: when I(state=applied)
  type: list
  elements: str
commands:
  description:
    - The commands rtprov ran (or would run) afterwards in the target, such as
      C(update-grub); also one the last apply did not finish, which alone makes the task
      C(changed).
  returned: when I(state=applied)
  type: list
  elements: list
findings:
  description: What rtprov's planner noticed (C(findings) of C(rtprov plan --json)).
  returned: when I(state=applied)
  type: list
  elements: dict
  sample: [{"severity": "warning", "code": "reserved-idle", "message": "..."}]
packages:
  description: Debian packages the profile needs that the target lacks (the PREEMPT_RT kernel).
  returned: when I(state=applied)
  type: list
  elements: str
reboot_required:
  description:
    - With I(live=true) and I(state=applied), true when the running kernel lacks what the
      applied profile put into the boot configuration, according to C(rtprov audit --json)
      (its C(cmdline) or C(kernel-preemption) check failed), or when a trial is armed and
      its boot is still to come (C(rtprov trial status)); this holds until the host has
      booted it, also on a later run that changes nothing.
    - With I(state=rolled_back), true when a live rollback changed files (rtprov does not
      say whether the running command line still carries the removed parameters).
    - Always false offline (I(live=false)) and in check mode.
    - Where the audit could not see the running command line or the kernel's preemption
      mode, false does not cover that, and the module says so in a warning.
  returned: always
  type: bool
status:
  description: C(rtprov status --json) after the run (not in check mode).
  returned: success, when not in check mode
  type: dict
rc:
  description: rtprov's exit code (0 success, 1 failure or a refused plan, 2 wrong usage).
  returned: failure
  type: int
stderr:
  description: What rtprov printed on standard error; C(msg) holds its message.
  returned: failure
  type: str
"""

import json
import re

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.rtprov.rtprov.plugins.module_utils import rtprov_cli


def target_args(params):
    return ["--live"] if params["live"] else ["--root", params["root"]]


# A string YAML reads as null: given as a string it would remove the key (and bring the
# profile's own value back) where the playbook meant a value, as a template that renders
# empty does. YAML 1.2's null words, '~' and nothing, also with a comment after them or as
# a document of its own ('---', '...').
YAML_NULL = re.compile(r"^\s*(?:(?:---|\.\.\.)(?:\s+|$))*(?:~|null|Null|NULL)?\s*(?:#.*)?"
                       r"(?:\s+(?:---|\.\.\.)\s*)*$", re.DOTALL)


def set_args(module, values):
    # rtprov reads VALUE as YAML: strings go as they are ("2-3"), null as "~" (which
    # removes the key), everything else as JSON, which YAML reads the same way
    args = []
    for key in sorted(values):
        value = values[key]
        if value is None:
            value = "~"
        elif isinstance(value, str) and YAML_NULL.match(value):
            module.fail_json(msg="set: %s is the string '%s', which rtprov reads as YAML null: "
                                 "it would remove the key and bring the profile's own value "
                                 "back. Give the value meant, or null (not a string) to remove "
                                 "the key" % (key, value))
        elif not isinstance(value, str):
            value = json.dumps(value)
        args += ["--set", "%s=%s" % (key, value)]
    return args


def live_reboot_required(module, rtprov, extra):
    # 3: the audit ran and a check failed, which is the answer being looked for
    dummy, audit = rtprov_cli.run_json(module, rtprov, ["audit", "--json"], "rtprov.audit",
                                       accept=(0, rtprov_cli.EXIT_NOT_PASSED), extra=extra)
    for unseen in rtprov_cli.boot_unseen(audit):
        module.warn("reboot_required cannot cover what rtprov audit could not see: " + unseen)
    return rtprov_cli.reboot_required(audit)


def status(module, rtprov, target, extra=None):
    # 3: drift (a file changed by hand or missing) or an interrupted apply or rollback,
    # which the JSON says (docs/json.md)
    dummy, doc = rtprov_cli.run_json(module, rtprov, ["status", "--json"] + target,
                                     "rtprov.status", accept=(0, rtprov_cli.EXIT_NOT_PASSED),
                                     extra=extra)
    return doc


def run_changing(module, rtprov, args, target, before, result):
    """Runs 'rtprov apply' or 'rollback' (ARGS). On failure it fails the task with RESULT,
    whose 'changed' says whether rtprov changed anything before it stopped: whether
    'rtprov status --json' differs from BEFORE (rtprov records a change in its state
    before it makes it; a refusal changes nothing). When status cannot be read, changed."""
    cmd = [rtprov] + args + target
    rc, out, err = module.run_command(cmd)
    if rc == 0:
        return
    dummy, status_out, dummy = module.run_command([rtprov, "status", "--json"] + target)
    try:
        after = json.loads(status_out)
    except ValueError:
        after = None
    result = dict(result, changed=after != before)
    rtprov_cli.fail(module, cmd, rc, out, err, **result)


def applied(module, rtprov, target):
    p = module.params
    profile_args = ["--profile", p["profile"]] + set_args(module, p["set"])
    if p["trial"]:
        profile_args.append("--trial")
    cmd = [rtprov, "plan", "--json"] + target + profile_args
    rc, out, err = module.run_command(cmd)
    # 1 with a plan: refused (below); without one: no plan at all (a bad profile, ...)
    if rc not in (0, 1) or not out.lstrip().startswith("{"):
        rtprov_cli.fail(module, cmd, rc, out, err)
    plan = rtprov_cli.parse(module, cmd, rc, out, err, "rtprov.plan")
    result = dict(changed=False, reboot_required=False, findings=plan["findings"],
                  changes=[dict((k, v) for k, v in c.items() if k != "diff")
                           for c in plan["changes"]],
                  retired=plan["retired"], commands=plan["commands"],
                  packages=plan["packages"])
    if plan["refused"] or rc != 0:
        errors = [f["message"] for f in plan["findings"] if f["severity"] == "error"]
        message = "rtprov refused the plan: " + "; ".join(errors) if errors else None
        rtprov_cli.fail(module, cmd, rc, out, err, msg=message, **result)
    # a command alone is a change too: an update-grub the last apply did not finish
    # (rtprov status: pending) is run by this apply, or recorded for first boot offline
    if plan["changes"] or plan["retired"] or plan["commands"]:
        result["changed"] = True
        if module._diff:
            result["diff"] = [dict(prepared=c["diff"]) for c in plan["changes"]]
    else:
        result["commands"] = []
    if module.check_mode:
        return result
    if result["changed"]:
        run_changing(module, rtprov, ["apply"] + profile_args, target,
                     status(module, rtprov, target), result)
    # from here on a failure says changed (and the changes) when the apply ran
    result["status"] = status(module, rtprov, target, extra=result)
    if p["live"]:
        # An armed trial waits for its boot even where the running kernel already has
        # what the profile asks (an earlier apply, rolled back since): until that boot,
        # the default entry does not carry it.
        trial = result["status"].get("trial") or {}
        result["reboot_required"] = (
            (trial.get("phase") == "armed" and trial.get("this_boot") == "not-yet")
            or live_reboot_required(module, rtprov, result))
    return result


def rolled_back(module, rtprov, target):
    before = status(module, rtprov, target)
    result = dict(changed=False, reboot_required=False, changes=[])
    if not before["applied"]:
        return result
    # rtprov's own answer to whether rollback would refuse (a hand edit it would lose, a
    # file it cannot replace, ...): said before anything runs, in check mode too
    force = module.params["force"]
    why = before.get("rollback_force_refused" if force else "rollback_refused")
    if why:
        if not force and not before.get("rollback_force_refused"):
            why += " (with this module: force: true, and the hand edits are lost)"
        module.fail_json(msg=why, changed=False, changes=before["files"], status=before)
    result["changed"] = True
    result["changes"] = before["files"]
    if module.check_mode:
        return result
    run_changing(module, rtprov, ["rollback"] + (["--force"] if force else []), target,
                 before, result)
    result["status"] = status(module, rtprov, target, extra=result)
    result["reboot_required"] = module.params["live"]
    return result


def main():
    module = AnsibleModule(
        argument_spec=dict(
            profile=dict(type="str"),
            set=dict(type="dict", default={}),
            state=dict(type="str", default="applied", choices=["applied", "rolled_back"]),
            trial=dict(type="bool", default=False),
            live=dict(type="bool", default=False),
            root=dict(type="path"),
            force=dict(type="bool", default=False),
        ),
        required_if=[("state", "applied", ["profile"])],
        supports_check_mode=True,
    )
    p = module.params
    if p["state"] == "rolled_back":
        given = [name for name in ("profile", "set", "trial") if p[name]]
        if given:
            module.fail_json(msg="state=rolled_back takes no %s: rtprov rolls back what it "
                                 "applied" % ", ".join(given))
    elif p["force"]:
        module.fail_json(msg="force is for state=rolled_back (rtprov rollback --force); "
                             "apply takes no force")
    if p["trial"] and not p["live"]:
        module.fail_json(msg="trial: true works on the running host (live: true): on an image "
                             "root the trial is its first boot, which only a GRUB grub.cfg made "
                             "now with the image's block devices can arm (rtprov apply --trial "
                             "--regenerate-boot=now where /dev and /boot are in place), and an "
                             "image root on the managed host usually has none; leave the trial "
                             "to the image's first boot (trial: true in "
                             "/etc/rtprov/firstboot.yaml, the default)")
    if p["live"] and p["root"] is not None:
        module.fail_json(msg="live=true works on the running host: leave root out (or, to "
                             "work offline on an image root, set live=false)")
    if not p["live"] and p["root"] in (None, "/"):
        module.fail_json(msg="say where to work: live: true for the running host, or root: "
                             "an image root on it (not /) to work offline")
    rtprov = module.get_bin_path("rtprov", required=True)
    target = target_args(p)
    if p["state"] == "applied":
        result = applied(module, rtprov, target)
    else:
        result = rolled_back(module, rtprov, target)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
