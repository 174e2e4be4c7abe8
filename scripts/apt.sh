# Functions for the scripts that install Debian packages; source this file.
# Every apt-get call waits for another install to finish instead of failing
# at once with "Could not get lock /var/lib/dpkg/lock-frontend":
# PERFSCOPE_APT_LOCK_TIMEOUT bounds the wait (seconds, default 600).
# scripts/apt_test.go holds the locks and runs these functions against them.

# apt_get runs apt-get as root (with sudo when not root), waiting for the
# dpkg lock another apt-get or dpkg holds.
apt_get() {
	local sudo=""
	if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
	$sudo env DEBIAN_FRONTEND=noninteractive \
		apt-get -o DPkg::Lock::Timeout="${PERFSCOPE_APT_LOCK_TIMEOUT:-600}" "$@"
}

# apt_update runs apt-get update. Its lock, /var/lib/apt/lists/lock, is not
# one DPkg::Lock::Timeout waits for (apt 2.6 fails at once), so a failure
# that names a held lock is retried until the same timeout.
apt_update() {
	local deadline=$((SECONDS + ${PERFSCOPE_APT_LOCK_TIMEOUT:-600})) status err said=""
	while :; do
		status=0
		err="$(apt_get update "$@" 2>&1 >/dev/null)" || status=$?
		if [ "$status" = 0 ]; then
			if [ -n "$err" ]; then echo "$err" >&2; fi
			return 0
		fi
		if [[ "$err" != *"Could not get lock"* ]] || [ "$SECONDS" -ge "$deadline" ]; then
			echo "$err" >&2
			return "$status"
		fi
		if [ -z "$said" ]; then
			echo "apt-get update: waiting for another apt-get to release its lock" >&2
			said=1
		fi
		sleep 1
	done
}

# apt_install updates the package lists and installs the packages named.
apt_install() {
	echo "installing $*: updating the package lists" >&2
	apt_update -qq || return
	echo "installing $*" >&2
	apt_get install -y -qq "$@" >/dev/null
}
