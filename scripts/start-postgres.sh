#!/usr/bin/env bash
# Starts the local PostgreSQL cluster for perfscope's tests and prints the DSN
# of a "perfscope" database on 127.0.0.1 as the last line of stdout, e.g.
#   export PERFSCOPE_TEST_POSTGRES="$(bash scripts/start-postgres.sh | tail -n 1)"
# Safe to run again: it starts only what is not running and creates only what
# is missing. Needs the Debian postgresql packages (pg_ctlcluster) and root or
# sudo. PG_VERSION and PG_CLUSTER override the cluster (default: 15 if
# installed, else the newest installed version; "main").
set -euo pipefail

log() { echo "start-postgres: $*" >&2; }

if ! command -v pg_ctlcluster >/dev/null 2>&1; then
	log "pg_ctlcluster not found: install the postgresql package"
	exit 1
fi

version="${PG_VERSION:-}"
if [ -z "$version" ]; then
	if [ -d /usr/lib/postgresql/15 ]; then
		version=15
	else
		version="$(ls /usr/lib/postgresql | sort -n | tail -n 1)"
	fi
fi
cluster="${PG_CLUSTER:-main}"
user=perfscope
password=perfscope # a local test database on loopback, not a secret
db=perfscope

if [ "$(id -u)" = 0 ]; then
	as_postgres() { runuser -u postgres -- "$@"; }
	SUDO=""
else
	as_postgres() { sudo -u postgres -- "$@"; }
	SUDO="sudo"
fi

if ! pg_lsclusters -h | awk -v v="$version" -v c="$cluster" '$1 == v && $2 == c { found = 1 } END { exit !found }'; then
	log "creating cluster $version/$cluster"
	$SUDO pg_createcluster "$version" "$cluster" >&2
fi

status="$(pg_lsclusters -h | awk -v v="$version" -v c="$cluster" '$1 == v && $2 == c { print $4 }')"
port="$(pg_lsclusters -h | awk -v v="$version" -v c="$cluster" '$1 == v && $2 == c { print $3 }')"
if [ "$status" != online ]; then
	log "starting cluster $version/$cluster on port $port"
	$SUDO pg_ctlcluster "$version" "$cluster" start >&2
fi

for _ in $(seq 1 60); do
	if pg_isready -q -h 127.0.0.1 -p "$port"; then
		break
	fi
	sleep 0.5
done
if ! pg_isready -q -h 127.0.0.1 -p "$port"; then
	log "PostgreSQL did not accept connections on 127.0.0.1:$port"
	exit 1
fi

psql_admin() { as_postgres psql -X -q -v ON_ERROR_STOP=1 -p "$port" "$@"; }

psql_admin -c "DO \$\$ BEGIN
	IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$user') THEN
		CREATE ROLE $user LOGIN PASSWORD '$password';
	ELSE
		ALTER ROLE $user LOGIN PASSWORD '$password';
	END IF;
END \$\$;" >&2
if [ "$(psql_admin -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'")" != 1 ]; then
	log "creating database $db"
	psql_admin -c "CREATE DATABASE $db OWNER $user" >&2
fi

dsn="postgres://$user:$password@127.0.0.1:$port/$db?sslmode=disable"
if ! psql -X -q "$dsn" -c 'SELECT 1' >/dev/null; then
	log "cannot log in as $user on 127.0.0.1:$port (check pg_hba.conf allows password logins from 127.0.0.1)"
	exit 1
fi
echo "$dsn"
