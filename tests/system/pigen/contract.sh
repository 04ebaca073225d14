# SPDX-License-Identifier: Apache-2.0
# pi-gen's contract for running stages, written from pi-gen's source (build.sh
# run_stage/run_sub_stage, scripts/common on_chroot/copy_previous), so that a stage can be
# executed here as pi-gen executes it without pi-gen's own stage0 (which needs
# archive.raspberrypi.com). Sourced; call pigen_run_stage STAGE_DIR after exporting what
# build.sh exports (BASE_DIR, WORK_DIR, ARCH, RELEASE, PREV_ROOTFS_DIR, ...) and sourcing
# the config as build.sh does (plain 'source', no 'set -a'). Run it in a private mount
# namespace (unshare --mount), so that its chroot mounts end with it.
# shellcheck shell=bash disable=SC2119,SC2120 # on_chroot reads stdin or takes arguments

log() {
	echo "[$(date -u +%T)] $*"
}

copy_previous() {
	[ -d "${PREV_ROOTFS_DIR}" ] || { echo "copy_previous: no ${PREV_ROOTFS_DIR}" >&2; return 1; }
	mkdir -p "${ROOTFS_DIR}"
	rsync -aHAXx --exclude /var/cache/apt/archives "${PREV_ROOTFS_DIR}/" "${ROOTFS_DIR}/"
}

pigen_mount() { # MOUNT_ARGS... TARGET: mounts unless something is mounted there already
	mountpoint -q "${!#}" || mount "$@"
}

# As pi-gen: proc, /dev, /dev/pts, /sys bound in, tmpfs on /run and /tmp, then bash -e
# through capsh without cap_setfcap, reading the script from stdin or the arguments.
on_chroot() {
	pigen_mount -t proc proc "${ROOTFS_DIR}/proc"
	pigen_mount --bind /dev "${ROOTFS_DIR}/dev"
	pigen_mount --bind /dev/pts "${ROOTFS_DIR}/dev/pts"
	pigen_mount --bind /sys "${ROOTFS_DIR}/sys"
	pigen_mount -t tmpfs tmpfs "${ROOTFS_DIR}/run"
	pigen_mount -t tmpfs tmpfs "${ROOTFS_DIR}/tmp"
	capsh "${CAPSH_ARG:---drop=cap_setfcap}" "--chroot=${ROOTFS_DIR}/" -- -e "$@"
}

pigen_unmount() { # every mount below DIR, deepest first
	local dir
	dir=$(realpath -m "$1")
	awk -v d="$dir" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo |
		sort -r | while read -r m; do umount "$m"; done
}

pigen_packages() { # FILE: the package names, comments and blank lines removed
	sed -e 's/#.*//' "$1" | tr -s ' \t\n' ' ' | sed -e 's/^ //' -e 's/ $//'
}

pigen_run_sub_stage() {
	log "Begin ${SUB_STAGE_DIR}"
	pushd "${SUB_STAGE_DIR}" >/dev/null || return 1
	local i packages
	for i in {00..99}; do
		if [ -f "${i}-debconf" ]; then
			log "Begin ${SUB_STAGE_DIR}/${i}-debconf"
			on_chroot <<-EOF
				echo "$(cat "${i}-debconf")" | debconf-set-selections
			EOF
		fi
		if [ -f "${i}-packages-nr" ]; then
			log "Begin ${SUB_STAGE_DIR}/${i}-packages-nr"
			packages=$(pigen_packages "${i}-packages-nr")
			[ -z "${packages}" ] || on_chroot <<-EOF
				apt-get -o Acquire::Retries=3 install --no-install-recommends -y ${packages}
			EOF
		fi
		if [ -f "${i}-packages" ]; then
			log "Begin ${SUB_STAGE_DIR}/${i}-packages"
			packages=$(pigen_packages "${i}-packages")
			[ -z "${packages}" ] || on_chroot <<-EOF
				apt-get -o Acquire::Retries=3 install -y ${packages}
			EOF
		fi
		if [ -d "${i}-patches" ]; then
			echo "contract.sh: ${i}-patches (quilt) is not part of this harness" >&2
			return 1
		fi
		if [ -x "${i}-run.sh" ]; then
			log "Begin ${SUB_STAGE_DIR}/${i}-run.sh"
			"./${i}-run.sh"
		elif [ -f "${i}-run.sh" ]; then
			log "Skip ${SUB_STAGE_DIR}/${i}-run.sh (not executable)"
		fi
		if [ -f "${i}-run-chroot.sh" ]; then
			log "Begin ${SUB_STAGE_DIR}/${i}-run-chroot.sh"
			on_chroot <"${i}-run-chroot.sh"
		fi
	done
	popd >/dev/null || return 1
	log "End ${SUB_STAGE_DIR}"
}

pigen_run_stage() { # STAGE_DIR; sets EXPORT_DIRS as build.sh does
	STAGE_DIR=$(realpath "$1")
	STAGE=$(basename "${STAGE_DIR}")
	STAGE_WORK_DIR="${WORK_DIR}/${STAGE}"
	ROOTFS_DIR="${STAGE_WORK_DIR}/rootfs"
	export STAGE STAGE_DIR STAGE_WORK_DIR ROOTFS_DIR
	log "Begin ${STAGE_DIR}"
	pushd "${STAGE_DIR}" >/dev/null || return 1
	pigen_unmount "${STAGE_WORK_DIR}"
	if [ ! -f SKIP_IMAGES ] && [ -f "${STAGE_DIR}/EXPORT_IMAGE" ]; then
		EXPORT_DIRS="${EXPORT_DIRS:-} ${STAGE_DIR}"
	fi
	if [ ! -f SKIP ]; then
		if [ -x prerun.sh ]; then
			log "Begin ${STAGE_DIR}/prerun.sh"
			./prerun.sh
		fi
		for SUB_STAGE_DIR in "${STAGE_DIR}"/*; do
			if [ -d "${SUB_STAGE_DIR}" ] && [ ! -f "${SUB_STAGE_DIR}/SKIP" ]; then
				pigen_run_sub_stage
			fi
		done
	fi
	pigen_unmount "${STAGE_WORK_DIR}"
	PREV_STAGE="${STAGE}"
	PREV_STAGE_DIR="${STAGE_DIR}"
	PREV_ROOTFS_DIR="${ROOTFS_DIR}"
	export PREV_STAGE PREV_STAGE_DIR PREV_ROOTFS_DIR
	popd >/dev/null || return 1
	log "End ${STAGE_DIR}"
}

export -f log copy_previous pigen_mount on_chroot pigen_unmount
