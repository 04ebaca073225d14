# SPDX-License-Identifier: Apache-2.0
# Shared by this sub-stage's NN-run.sh scripts (sourced; pi-gen runs only NN-* files, so it
# never runs this one itself). Reads the exported RTPROV_* settings from pi-gen's config
# and fails with what to do when one is wrong. A variable set in config without 'export'
# never reaches stage scripts: pi-gen sources config without 'set -a' (pi-gen's build.sh).
# shellcheck shell=bash disable=SC2034 # the variables are for the scripts that source it

rtprov_fail() {
	echo "stage-rtprov: $*" >&2
	exit 1
}

# The build host's rtprov: it works on ${ROOTFS_DIR} from outside, as on any image root.
RTPROV=${RTPROV:-rtprov}
command -v "${RTPROV}" >/dev/null ||
	rtprov_fail "'${RTPROV}' not found on the build host; install rtprov there (scripts/build-deb.sh amd64 makes the package) or add 'export RTPROV=/path/to/rtprov' to pi-gen's config"

# The profile: a name, or a .yaml file of the build host (a relative path is from the
# sub-stage folder), which 00-run.sh puts into the image as /etc/rtprov/profiles/NAME.yaml
# so that first boot, audit and rollback on the Pi find it by its name too.
rtprov_profile=${RTPROV_PROFILE:-pi4}
rtprov_profile_file=
case ${rtprov_profile} in
*/* | ?*.yaml) # what rtprov takes as a file
	rtprov_profile_file=${rtprov_profile}
	[ -f "${rtprov_profile_file}" ] ||
		rtprov_fail "RTPROV_PROFILE='${rtprov_profile}' is no file (a relative path is from $PWD); give a profile name ('rtprov profiles') or a .yaml file"
	rtprov_profile=$(basename "${rtprov_profile_file}" .yaml)
	;;
esac

# Arguments for 'rtprov plan|apply': profile, overrides, the PREEMPT_RT choice.
rtprov_args=(--profile "${rtprov_profile}")
read -r -a rtprov_sets <<<"${RTPROV_SET:-}"
for kv in "${rtprov_sets[@]}"; do
	[[ "${kv}" == *=* ]] || rtprov_fail "RTPROV_SET entry '${kv}' is not KEY=VALUE (entries are separated by spaces)"
	rtprov_args+=(--set "${kv}")
done
case "${RTPROV_RT_KERNEL:-0}" in
1 | yes | true) rtprov_args+=(--set tuning.kernel.realtime=true) ;;
0 | no | false) ;;
*) rtprov_fail "RTPROV_RT_KERNEL='${RTPROV_RT_KERNEL}': give 1 (boot the PREEMPT_RT kernel) or 0" ;;
esac
case "${RTPROV_FIRSTBOOT:-1}" in
1 | yes | true) rtprov_firstboot=1 ;;
0 | no | false) rtprov_firstboot=0 ;;
*) rtprov_fail "RTPROV_FIRSTBOOT='${RTPROV_FIRSTBOOT}': give 1 (self-test and audit at first boot) or 0" ;;
esac

# Sets rtprov_deb: RTPROV_DEB, or the one files/rtprov_*_${ARCH}.deb (run in 00-rtprov/).
rtprov_find_deb() {
	rtprov_deb=${RTPROV_DEB:-}
	if [ -z "${rtprov_deb}" ]; then
		local debs
		debs=(files/rtprov_*_"${ARCH:-arm64}".deb)
		if [ ! -f "${debs[0]}" ] || [ "${#debs[@]}" -ne 1 ]; then
			rtprov_fail "need exactly one rtprov_*_${ARCH:-arm64}.deb in $PWD/files; make it with rtprov's scripts/build-deb.sh ${ARCH:-arm64} and copy it there, or export RTPROV_DEB=/path/to.deb"
		fi
		rtprov_deb=${debs[0]}
	fi
	[ -f "${rtprov_deb}" ] || rtprov_fail "RTPROV_DEB='${rtprov_deb}' does not exist"
	# apt would only say its dependencies are not installable.
	local deb_arch deb_package
	deb_arch=$(dpkg-deb --field "${rtprov_deb}" Architecture 2>/dev/null) ||
		rtprov_fail "'${rtprov_deb}' is not a Debian package (dpkg-deb cannot read it)"
	deb_package=$(dpkg-deb --field "${rtprov_deb}" Package)
	[ "${deb_package}" = rtprov ] || rtprov_fail "'${rtprov_deb}' is the package '${deb_package}', not rtprov"
	if [ "${deb_arch}" != "${ARCH:-arm64}" ] && [ "${deb_arch}" != all ]; then
		rtprov_fail "'${rtprov_deb}' is for ${deb_arch}, the image is ${ARCH:-arm64}; make the ${ARCH:-arm64} package with rtprov's scripts/build-deb.sh ${ARCH:-arm64}"
	fi
}
