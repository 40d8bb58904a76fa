# SPDX-License-Identifier: GPL-2.0
# Sourced, not run: where this host gets Debian from, and apt pointed at
# another release without touching the host's own apt configuration.
#
#   host_uri main|security     the archive URI of the host's main (or
#                              security) suite, from debian.sources or
#                              sources.list
#   apt_private DIR SUITE      write DIR/sources.list (deb and deb-src of
#                              SUITE and SUITE-security) and
#                              set APT_PRIVATE, the apt options that use it
#                              with lists kept in DIR/lists
#   apt_private_update DIR     apt-get update with it when its lists are
#                              older than SECARENA_APT_MAX_AGE (86400 s)

host_uri() {
	local u
	u=$(awk -v want="$1" 'BEGIN { RS = ""; FS = "\n" }
		{ uri = ""; sec = 0
		  for (i = 1; i <= NF; i++) {
			if ($i ~ /^URIs:/) { split($i, w, /[ \t]+/); uri = w[2] }
			if ($i ~ /^Suites:/ && $i ~ /-security/) sec = 1
		  }
		  if (uri != "" && (want == "security") == sec) { print uri; exit } }' \
		/etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
	[ -n "$u" ] || u=$(sed 's/\[[^]]*\]//' /etc/apt/sources.list 2>/dev/null |
		awk -v want="$1" '$1 == "deb" && (want == "security") == ($3 ~ /-security$/) { print $2; exit }')
	# No security source on the host: Debian's security archive sits beside
	# the main one (http://deb.debian.org/debian -> .../debian-security).
	if [ -z "$u" ] && [ "$1" = security ]; then
		u=$(host_uri main)
		case "$u" in
		*/debian | */debian/) u=${u%/}-security ;;
		*) u="" ;;
		esac
	fi
	echo "$u"
}

apt_private() { # apt_private DIR SUITE
	local dir=$1 suite=$2 main sec kr=/usr/share/keyrings/debian-archive-keyring.gpg
	main=$(host_uri main)
	sec=$(host_uri security)
	[ -n "$main" ] || { echo "apt_private: no Debian archive URI in the host's apt sources" >&2; return 1; }
	mkdir -p "$dir/lists/partial"
	{
		for t in deb deb-src; do
			echo "$t [signed-by=$kr] $main $suite main"
			[ -n "$sec" ] && echo "$t [signed-by=$kr] $sec $suite-security main"
		done
	} >"$dir/sources.list.new"
	# A changed list (another suite, another mirror) starts with no lists.
	if ! cmp -s "$dir/sources.list.new" "$dir/sources.list"; then
		rm -rf "$dir/lists"
		mkdir -p "$dir/lists/partial"
		mv "$dir/sources.list.new" "$dir/sources.list"
	else
		rm -f "$dir/sources.list.new"
	fi
	APT_PRIVATE=(-o "Dir::Etc::SourceList=$dir/sources.list" -o Dir::Etc::SourceParts=-
		-o "Dir::State::Lists=$dir/lists" -o APT::Get::List-Cleanup=0
		-o "Dir::Cache=$dir/cache")
}

apt_private_update() { # apt_private_update DIR
	local dir=$1 age
	age=$(( $(date +%s) - $(stat -c %Y "$dir/lists/.updated" 2>/dev/null || echo 0) ))
	[ "$age" -lt "${SECARENA_APT_MAX_AGE:-86400}" ] && return 0
	mkdir -p "$dir/cache/archives/partial"
	apt-get -qq "${APT_PRIVATE[@]}" update && touch "$dir/lists/.updated"
}
