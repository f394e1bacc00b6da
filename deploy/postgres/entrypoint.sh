#!/bin/bash
# The official postgres image's start, in short: on first start (an empty data folder) a cluster owned
# by POSTGRES_USER with POSTGRES_PASSWORD (UTF-8, as the official image makes it), reachable by password
# from other hosts, and the database
# POSTGRES_DB; then the server in the foreground as user postgres.
set -euo pipefail
as_postgres() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=postgres --regid=postgres --init-groups "$@"; else "$@"; fi; }
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" && chown postgres:postgres "$PGDATA" && chmod 700 "$PGDATA"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set, as with the official image}"
  user="${POSTGRES_USER:-postgres}"
  database="${POSTGRES_DB:-$user}"
  password_file="$(mktemp)"
  printf '%s' "$POSTGRES_PASSWORD" > "$password_file"
  chown postgres "$password_file"
  as_postgres initdb -D "$PGDATA" -U "$user" --encoding=UTF8 --locale=C.UTF-8 --pwfile="$password_file" --auth-local=trust --auth-host=scram-sha-256 > /dev/null
  rm -f "$password_file"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
  if [ "$database" != postgres ]; then
    as_postgres pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start > /dev/null
    as_postgres psql -q -v ON_ERROR_STOP=1 -U "$user" -d postgres -c "CREATE DATABASE \"$database\""
    as_postgres pg_ctl -D "$PGDATA" -m fast -w stop > /dev/null
  fi
  echo "database $database made for $user"
fi
if [ "$1" = postgres ]; then
  shift
  exec setpriv --reuid=postgres --regid=postgres --init-groups postgres -D "$PGDATA" "$@"
fi
exec "$@"
