#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: zfs
# geli-truenas on disks laid out as FreeNAS / TrueNAS CORE made them (GPT,
# freebsd-swap then freebsd-zfs from LBA 128, PARTUUIDs set; a log disk with
# the ZFS partition only), their providers made with its geli commands
# (9.x-style AES-XTS-128 and 11.x-style AES-XTS-256 in one raidz, a key-only
# pool with a recovery key, a pool with a passphrase), and configuration
# backups of each shape: 11.x and 12+ databases in a tar with geli/, a tar
# without, a bare .db, a 9.3 database with stale ada1p2 names, a SCALE
# 23.10 one.  The pool made as CORE 13.0 made it (on OpenZFS, in a guest of
# the lane: -o compatibility=openzfs-2.1-freebsd; else on zfs-fuse),
# imported from a read-only attach (OpenZFS: read-only, from the block
# devices of attach -L, the disks unchanged after), its files intact; a disk
# missing; wrong keys; the swap partitions never opened (strace); geli
# search on disks whose tables are gone.  Then docs/truenas.md: each of its
# command blocks run, in order, with this test's disks for its /dev/sdX,
# and its outcome checked (with zfs-fuse: its files, read-write, without
# ZFS's encryption).  On Debian 12's own OpenZFS 2.1 (the lane's bookworm)
# up to the imports only: the rest does not differ there.
. "$(dirname "$0")/lib.sh"
TRUENAS=$(cd "$(dirname "$GELI")/../truenas" && pwd)/geli-truenas
if [ "$(id -u)" -ne 0 ] || ! losetup -f >/dev/null 2>&1 || ! command -v sgdisk >/dev/null ||
	! command -v partx >/dev/null || ! command -v sqlite3 >/dev/null; then
	skip "needs root, a free loop device, sgdisk, partx and sqlite3"; done_testing; exit
fi
need_fuse || { done_testing; exit; }
export GELI

# ---- Disks as FreeNAS partitioned them ---------------------------------------
ZFS=a504 SWAP=a502
uuid() { printf '%08x-0000-4000-8000-%012x\n' "$1" "$2"; }
declare -A LOOP
# disk NAME SIZE_MB SWAP_SECTORS ZFS_UUID: p1 swap (when SWAP_SECTORS > 0)
# from LBA 128, then the ZFS partition to the end, 4 KiB-aligned.
disk() {
	local img=$T/$1 dev
	truncate -s "${2}M" "$img"
	if [ "$3" -gt 0 ]; then
		sgdisk -a 8 -n 1:128:+"$3" -t 1:$SWAP -u 1:"$(uuid 5 "$RANDOM")" \
			-n 2:0:0 -t 2:$ZFS -u 2:"$4" "$img" >/dev/null
	else
		sgdisk -a 8 -n 1:128:0 -t 1:$ZFS -u 1:"$4" "$img" >/dev/null
	fi
	attach_disk "$1"
}
# attach_disk NAME: its loop device with partitions (LOOP[NAME]).
attach_disk() {
	local dev
	dev=$(losetup -f -P --show "$T/$1") || return 1
	on_exit "drop_loop '$dev' '$T/$1' 2>/dev/null"
	partx -a "$dev" 2>/dev/null
	LOOP[$1]=$dev
}
zpart() { if [ "$1" = d4 ]; then echo "${LOOP[$1]}p1"; else echo "${LOOP[$1]}p2"; fi; }

U1=$(uuid 1 1) U2=$(uuid 1 2) U3=$(uuid 1 3) U4=$(uuid 1 4) U5=$(uuid 2 1)
disk d1 100 4096 "$U1"
disk d2 100 4096 "$U2"
disk d3 100 4096 "$U3"
disk d4 72 0 "$U4"          # the log disk: no swap
disk d5 100 4096 "$U5"      # the pool with a passphrase
for d in d1 d2 d3 d5; do head -c 1M /dev/urandom | dd of="${LOOP[$d]}p1" bs=64k status=none; done
check "the loop devices have their partitions" test -b "$(zpart d4)" -a -b "$(zpart d5)"

# ---- Providers as the middleware made them -------------------------------------
head -c 64 /dev/urandom >"$T/tank.key"
head -c 64 /dev/urandom >"$T/tank.rec"
head -c 64 /dev/urandom >"$T/vault.key"
printf 'vault passphrase' >"$T/vault.pass"     # no newline, as FreeNAS wrote it
printf 'not it' >"$T/wrong.pass"
# 9.x: no -l (AES-XTS-128); 11.0-RC3 on: -l 256.
"$GELI" init -s 4096 -B none -P -K "$T/tank.key" "$(zpart d1)"
for d in d2 d3 d4; do "$GELI" init -s 4096 -B none -P -K "$T/tank.key" -l 256 "$(zpart $d)"; done
for d in d1 d2 d3 d4; do "$GELI" setkey -n 1 -p -k "$T/tank.key" -P -K "$T/tank.rec" "$(zpart $d)" >/dev/null; done
"$GELI" init -s 4096 -B none -P -K "$T/vault.key" -l 256 "$(zpart d5)"
"$GELI" setkey -n 0 -i 1000 -p -k "$T/vault.key" -J "$T/vault.pass" -K "$T/vault.key" "$(zpart d5)" >/dev/null
check "tank: AES-XTS-128 beside AES-XTS-256, slots 0 and 1" test \
	"$(dumpfield "$(zpart d1)" keylen)/$(dumpfield "$(zpart d2)" keylen)/$(dumpfield "$(zpart d1)" keys)" = "128/256/0x03"
check "vault: a passphrase on slot 0" test "$(dumpfield "$(zpart d5)" iterations)" = 1000

# ---- The configuration databases ---------------------------------------------
KEYID_TANK=6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f1
KEYID_VAULT=0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3
# rows PROVIDERS...: the pools and providers (tank, vault, an unencrypted media).
rows() {
	cat <<EOF
INSERT INTO storage_volume (id, vol_name, vol_guid, vol_encrypt, vol_encryptkey) VALUES
  (1, 'media', '1111', 0, ''), (2, 'tank', '2222', 1, '$KEYID_TANK'),
  (3, 'vault', '3333', 2, '$KEYID_VAULT');
INSERT INTO storage_encrypteddisk (id, encrypted_volume_id, encrypted_disk_id, encrypted_provider) VALUES
  (1, 2, '{serial}A1', '$1'), (2, 2, '{serial}A2', '$2'), (3, 2, '{serial}A3', '$3'),
  (4, 2, '{serial}A4', '$4'), (5, 3, '{serial}B1', '$5');
EOF
}
GPTIDS=("gptid/$U1" "gptid/$U2" "gptid/$U3" "gptid/$U4" "gptid/$U5")
mkdir -p "$T/b11/geli" "$T/b12" "$T/b93" "$T/scale"
# 11.1 to 11.3 (Django).
sqlite3 "$T/b11/freenas-v1.db" <<EOF
CREATE TABLE "storage_volume" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "vol_name" varchar(120) NOT NULL UNIQUE, "vol_guid" varchar(50) NOT NULL, "vol_encrypt" integer NOT NULL, "vol_encryptkey" varchar(50) NOT NULL);
CREATE TABLE "storage_encrypteddisk" ("id" INTEGER PRIMARY KEY, "encrypted_volume_id" INTEGER NOT NULL, "encrypted_disk_id" varchar(100) NULL, "encrypted_provider" varchar(120) NOT NULL UNIQUE);
$(rows "${GPTIDS[@]}")
EOF
# 12.0 and 13.0 (alembic).
sqlite3 "$T/b12/freenas-v1.db" <<EOF
CREATE TABLE "storage_volume" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "vol_name" varchar(120) NOT NULL UNIQUE, "vol_guid" varchar(50) NOT NULL, "vol_encrypt" integer NOT NULL, "vol_encryptkey" varchar(50) NOT NULL);
CREATE TABLE "storage_disk" (disk_identifier VARCHAR(42) NOT NULL, disk_name VARCHAR(120) NOT NULL, CONSTRAINT pk_storage_disk PRIMARY KEY (disk_identifier));
CREATE TABLE "storage_encrypteddisk" (id INTEGER, encrypted_volume_id INTEGER NOT NULL, encrypted_disk_id VARCHAR(100), encrypted_provider VARCHAR(120) NOT NULL, PRIMARY KEY (id), CONSTRAINT fk_storage_encrypteddisk_encrypted_disk_id_storage_disk FOREIGN KEY(encrypted_disk_id) REFERENCES storage_disk (disk_identifier) ON DELETE SET NULL, CONSTRAINT fk_storage_encrypteddisk_encrypted_volume_id_storage_volume FOREIGN KEY(encrypted_volume_id) REFERENCES storage_volume (id) ON DELETE CASCADE);
$(rows "${GPTIDS[@]}")
EOF
# 9.3 (South), the providers stored by device name.
sqlite3 "$T/b93/freenas-v1.db" <<EOF
CREATE TABLE "storage_volume" ("id" INTEGER PRIMARY KEY, "vol_name" varchar(120) NOT NULL UNIQUE, "vol_fstype" varchar(120) NOT NULL, "vol_guid" varchar(50) NOT NULL, "vol_encrypt" INTEGER NOT NULL, "vol_encryptkey" varchar(50) NOT NULL);
CREATE TABLE "storage_encrypteddisk" ("id" INTEGER PRIMARY KEY, "encrypted_volume_id" INTEGER NOT NULL, "encrypted_disk_id" integer NULL, "encrypted_provider" varchar(120) NOT NULL UNIQUE);
INSERT INTO storage_volume VALUES (1, 'media', 'ZFS', '1111', 0, ''), (2, 'tank', 'ZFS', '2222', 1, '$KEYID_TANK');
INSERT INTO storage_encrypteddisk VALUES (1, 2, 1, 'ada1p2'), (2, 2, 2, 'ada2p2'), (3, 2, 3, 'ada3p2'), (4, 2, 4, 'ada4p1');
EOF
# SCALE 23.10: the GELI columns and table gone.
sqlite3 "$T/scale/freenas-v1.db" <<EOF
CREATE TABLE "storage_volume" (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, vol_name VARCHAR(120) NOT NULL, vol_guid VARCHAR(50) NOT NULL, CONSTRAINT uq_storage_volume_vol_name UNIQUE (vol_name));
INSERT INTO storage_volume (vol_name, vol_guid) VALUES ('tank', '2222');
EOF
check "the 9.3 database has its stale names" test \
	"$(sqlite3 "$T/b93/freenas-v1.db" "SELECT group_concat(encrypted_provider) FROM storage_encrypteddisk")" = \
	"ada1p2,ada2p2,ada3p2,ada4p1"
cp "$T/tank.key" "$T/b11/geli/$KEYID_TANK.key"
cp "$T/vault.key" "$T/b11/geli/$KEYID_VAULT.key"
head -c 32 /dev/urandom >"$T/b11/pwenc_secret"
tar -cf "$T/keys.tar" -C "$T/b11" freenas-v1.db pwenc_secret geli
tar -cf "$T/nokeys.tar" -C "$T/b12" freenas-v1.db
cp "$T/b12/freenas-v1.db" "$T/bare.db"
DISKS=()
for d in d1 d2 d3 d4 d5; do DISKS+=(-d "${LOOP[$d]}"); done
TN() { "$TRUENAS" "$1" "${DISKS[@]}" "${@:2}"; }
attached_count() { "$GELI" list 2>/dev/null | grep -c '^Geom name:'; }
detach_all() { local n; for n in $("$GELI" list 2>/dev/null | sed -n 's/^Geom name: \(.*\)\.eli$/\1/p'); do "$GELI" detach "$n"; done; }

# ---- A pool made on them, then put away -----------------------------------------
have_zfs=0 TNL=() compat=()
if need_zfs; then
	have_zfs=1
	# geli-truenas attach -L for OpenZFS's block devices; CORE 13.0's pools.
	if [ "$ZFS_KIND" = openzfs ]; then TNL=(-L) compat=(-o compatibility=openzfs-2.1-freebsd); fi
	for d in d1 d2 d3 d4; do zfs_attach -p -k "$T/tank.key" "$(zpart $d)"; done
	zfs_attach -j "$T/vault.pass" -k "$T/vault.key" "$(zpart d5)"
	zn() { zdev "$(basename "$(zpart "$1")")"; }
	zpool create "${compat[@]}" -m "$T/mnt/tank" tank raidz "$(zn d1)" "$(zn d2)" "$(zn d3)" \
		log "$(zn d4)"
	zpool create "${compat[@]}" -m "$T/mnt/vault" vault "$(zn d5)"
	if [ "$ZFS_KIND" = openzfs ]; then
		feats=$(zpool get -H -o property,value all tank | awk '$1 ~ /^feature@/ && $2 != "disabled" { print substr($1, 9) }' | sort)
		extra=$(grep -v '^#' /usr/share/zfs/compatibility.d/openzfs-2.1-freebsd | sort | comm -23 <(echo "$feats") -)
		check "tank: no feature beyond CORE 13.0's (openzfs-2.1-freebsd)${extra:+: $extra}" test \
			"$(zpool get -H -o value compatibility tank)" = openzfs-2.1-freebsd -a -z "$extra"
	fi
	for p in tank vault; do
		head -c 3M /dev/urandom >"$T/mnt/$p/data"
		cp "$T/keys.tar" "$T/mnt/$p/"
		(cd "$T/mnt/$p" && sha256sum data keys.tar) >"$T/$p.sums"
	done
	zpool export tank
	zpool export vault
	detach_all
	check "the pools are made and put away" test "$(attached_count)" = 0
fi
imgsum() { cat "$T"/d[1-5] | md5sum; }
sums_ok() { (cd "$1" && sha256sum -c --quiet "$2") >/dev/null 2>&1; }
before=$(imgsum)

# ---- list ------------------------------------------------------------------------
# (list, the keys from elsewhere, the refusals and geli search read disks
# and databases, which no kernel or ZFS changes: the host's passes prove
# them, and a guest of the lane skips them)
if in_guest; then
	skip "list, keys from elsewhere, refusals, geli search: the host's passes prove them"
else
run TN list "$T/keys.tar"
check "list: status 0" test "$rc" = 0
check "list: the pools" test "$(grep -E '^(Backup|Pool)' "$T/out")" = \
"Backup $T/keys.tar: 3 pools, encryption keys included.
Pool media (GUID 1111): not encrypted.
Pool tank (GUID 2222): GELI, key; 4 disks.
Pool vault (GUID 3333): GELI, key and passphrase; 1 disk."
check "list: the keys are the backup's" test "$(grep -c '^  key: the backup$' "$T/out")" = 2
check "list: tank, each disk by its PARTUUID, the key opens it" test \
	"$(grep -cE '^  gptid/[-0-9a-f]*: /dev/loop[0-9]+p[12], the key opens it \(slot 0\)$' "$T/out")" = 4
check "list: vault needs the passphrase to be tried" grep -qx \
	"  gptid/$U5: $(zpart d5), GELI provider; the passphrase is needed to try the key (-j)" "$T/out"
run TN list -j "$T/vault.pass" "$T/keys.tar"
check "list -j: the passphrase opens vault" grep -qx \
	"  gptid/$U5: $(zpart d5), the key and passphrase opens it (slot 0)" "$T/out"
run TN list "$T/nokeys.tar"
check "list of a tar without keys: says so" test "$rc" = 0 -a \
	"$(grep -c 'key: not in the backup' "$T/out")" = 2
run TN list -K "$T/tank.rec" "$T/bare.db"
check "list -K of a bare database: the recovery key opens tank (slot 1)" test \
	"$(grep -c 'the recovery key opens it (slot 1)' "$T/out")" = 4
fi

# ---- attach -r, import, files intact, disks unchanged -------------------------------
strace_ok=0
command -v strace >/dev/null && strace_ok=1
if [ $strace_ok = 1 ]; then
	# (LeakSanitizer cannot work under ptrace: off for this run of the
	# sanitized build, whose exit it would fail.)
	run env ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" strace -qq -e trace=open,openat \
		-o "$T/trace" "$TRUENAS" attach -r "${DISKS[@]}" "$T/keys.tar" tank
else
	run TN attach -r "$T/keys.tar" tank
fi
check "attach -r: status 0, four disks attached" test "$rc" = 0 -a "$(attached_count)" = 4
check "attach -r: says how to import" grep -qx "  zpool import -d $GELI_RUNDIR -o readonly=on tank" "$T/out"
if [ $strace_ok = 1 ]; then
	swaps=0
	for d in d1 d2 d3 d5; do swaps=$((swaps + $(grep -c "\"${LOOP[$d]}p1\"" "$T/trace"))); done
	check "the swap partitions are never opened (strace)" test "$swaps" = 0 -a \
		"$(grep -c "\"$(zpart d1)\"" "$T/trace")" -gt 0
fi
check "read-only: the attached providers are" bash -c '"$1" list | grep -q "Flags: .*READ-ONLY"' _ "$GELI"
"$GELI" detach $(sed -n 's/^  geli detach //p' "$T/out")
check "the printed detach command detaches them" test "$(attached_count)" = 0
check "the disks are unchanged after the read-only run" test "$(imgsum)" = "$before"
if [ "$ZFS_KIND" = openzfs ]; then
	run TN attach -L -r "$T/keys.tar" tank
	check "attach -L -r: says to import from the block devices" \
		grep -qx "  zpool import -d $GELI_DEVDIR -o readonly=on tank" "$T/out"
	zpool import -d "$ZDIR" -o readonly=on tank
	check "tank imports read-only from them, ONLINE" test \
		"$(zpool list -H -o health tank 2>/dev/null)/$(zpool get -H -o value readonly tank 2>/dev/null)" = ONLINE/on
	check "tank: its files intact" sums_ok "$T/mnt/tank" "$T/tank.sums"
	zpool export tank
	detach_all
	check "the disks are unchanged after the read-only import" test "$(imgsum)" = "$before"
fi
# zfs-fuse cannot import a pool read-only: the import, read-write.
if [ $have_zfs = 1 ]; then
	run TN attach "${TNL[@]}" "$T/keys.tar" tank
	zpool import -d "$ZDIR" tank
	check "tank imports, ONLINE" test "$(zpool list -H -o health tank 2>/dev/null)" = ONLINE
	check "tank: its files intact" sums_ok "$T/mnt/tank" "$T/tank.sums"
	zpool export tank
	detach_all
fi

# What follows, geli-truenas's own (its refusals, a passphrase) and the
# document's commands, is the same on either OpenZFS of the lane: Debian
# 12's own 2.1 has its part above (the pool made as CORE 13.0 made it,
# attached through FUSE and loop devices, imported), 2.3 all of it.
if openzfs_21; then
	skip "a disk missing, a passphrase, docs/truenas.md: as on OpenZFS 2.3 (the lane's backports), where they run"
	done_testing
	exit
fi

# ---- a disk missing --------------------------------------------------------------
losetup -d "${LOOP[d3]}"
run TN attach "${TNL[@]}" "$T/keys.tar" tank
check "one disk missing: the others attached, DEGRADED said" test "$rc" = 0 -a \
	"$(attached_count)" = 3 -a "$(grep -c 'DEGRADED' "$T/out")" = 1
check "... the missing one named" grep -qx "  gptid/$U3: not found" "$T/out"
if [ $have_zfs = 1 ]; then
	zpool import -d "$ZDIR" tank
	check "tank imports DEGRADED" test "$(zpool list -H -o health tank 2>/dev/null)" = DEGRADED
	check "... its files intact" sums_ok "$T/mnt/tank" "$T/tank.sums"
	zpool export tank
fi
detach_all
attach_disk d3
DISKS=()
for d in d1 d2 d3 d4 d5; do DISKS+=(-d "${LOOP[$d]}"); done

# ---- the pool with a passphrase ------------------------------------------------------
run TN attach -j "$T/wrong.pass" "$T/keys.tar" vault
check "vault, a wrong passphrase: refused, nothing attached" test "$rc" = 1 -a \
	"$(attached_count)" = 0 -a "$(cat "$T/err")" = \
	"geli-truenas: Wrong key or passphrase for pool vault: it opens none of its disks; nothing attached."
run TN attach "${TNL[@]}" -j "$T/vault.pass" "$T/keys.tar" vault
check "vault with its passphrase: attached" test "$rc" = 0 -a "$(attached_count)" = 1
if [ $have_zfs = 1 ]; then
	zpool import -d "$ZDIR" vault
	check "vault imports, its files intact" sums_ok "$T/mnt/vault" "$T/vault.sums"
	zpool export vault
fi
detach_all

# ---- keys from elsewhere: none in the backup, the recovery key, stale names ------------
if ! in_guest; then
run TN attach "$T/nokeys.tar" tank
check "a backup without keys: a clear refusal" test "$rc" = 1 -a "$(cat "$T/err")" = \
	"geli-truenas: No key for pool tank: $T/nokeys.tar holds none (saved without its encryption keys); give the pool's key file with -k, or its recovery key with -K."
run TN attach -r -K "$T/tank.rec" "$T/nokeys.tar" tank
check "the recovery key (-K) attaches tank" test "$rc" = 0 -a "$(attached_count)" = 4
detach_all
run TN attach -r -k "$T/tank.key" "$T/bare.db" tank
check "a bare database and the downloaded key (-k)" test "$rc" = 0 -a "$(attached_count)" = 4
detach_all
run TN list -k "$T/tank.key" "$T/b93/freenas-v1.db"
check "9.3, stale ada names: the disks found by the key" test "$rc" = 0 -a \
	"$(grep -c '^  found by its key: .*, the key opens it' "$T/out")" -ge 4
run TN attach -r -k "$T/tank.key" "$T/b93/freenas-v1.db" tank
check "9.3, stale ada names: tank attached" test "$rc" = 0 -a "$(attached_count)" = 4
detach_all

# ---- refusals ----------------------------------------------------------------------
run TN list "$T/scale/freenas-v1.db"
check "a SCALE 23.10 database: said so" test "$rc" = 1 -a "$(cat "$T/err")" = \
	"geli-truenas: This is a TrueNAS SCALE configuration: it records no GELI pools and no GELI keys. Use a backup made by FreeNAS or TrueNAS CORE, or attach the disks' ZFS partitions with geli attach and the pool's key file."
run TN attach "$T/keys.tar" nosuch
check "a pool not in the backup" test "$rc" = 1 -a "$(cat "$T/err")" = \
	"geli-truenas: No pool nosuch in $T/keys.tar (see: geli-truenas list $T/keys.tar)."
run TN attach "$T/keys.tar" media
check "an unencrypted pool" test "$rc" = 1 -a "$(cat "$T/err")" = \
	"geli-truenas: Pool media is not encrypted: import it as it is (zpool import media)."
run TN list "$T/tank.key"
check "not a backup" test "$rc" = 1 -a "$(cat "$T/err")" = \
	"geli-truenas: $T/tank.key is neither a configuration backup (tar) nor a freenas-v1.db database."
run "$TRUENAS" attach -d "${LOOP[d5]}" "$T/keys.tar" tank
check "none of the pool's disks here: nothing attached" test "$rc" = 1 -a "$(attached_count)" = 0 -a \
	"$(cat "$T/err")" = "geli-truenas: None of pool tank's disks is on this machine (among the disks given with -d); nothing attached."
check "nothing was left attached by the refusals" test "$(attached_count)" = 0
# An attach that fails midway (d2 already attached, by hand): the ones
# before it are detached again; the one attached by hand stays.
"$GELI" attach -r -p -k "$T/tank.key" "$(zpart d2)"
run TN attach -r "$T/keys.tar" tank
check "an attach failing midway: refused, the disks attached before it detached again" \
	test "$rc" = 1 -a "$(attached_count)" = 1 -a "$(tail -n 1 "$T/err")" = \
	"geli-truenas: Cannot attach $(zpart d2); the disks attached before it are detached again."
detach_all

# ---- geli search on disks whose partition tables are gone -----------------------------
cp "$T/d2" "$T/d2.zapped"
sgdisk --zap-all "$T/d2.zapped" >/dev/null 2>&1
run "$GELI" search "$T/d2.zapped"
check "search: the provider of a disk without its table (GPT p2 at LBA 4224)" test "$rc" = 0 -a \
	"$(grep -c '^GELI provider at offset' "$T/out")" = 1 -a \
	"$(sed -n 's/^     start: //p' "$T/out")" = "2162688 (sector 4224 of 512 bytes)"
# A disk of 4096-byte sectors: FreeNAS's layout in 4 KiB LBAs.
truncate -s 80M "$T/d6"
dev=$(losetup -f -P -b 4096 --show "$T/d6")
on_exit "drop_loop '$dev' '$T/d6' 2>/dev/null"
sgdisk -a 1 -n 1:16:+512 -t 1:$SWAP -n 2:0:0 -t 2:$ZFS "$dev" >/dev/null 2>&1
partx -a "$dev" 2>/dev/null
"$GELI" init -s 4096 -B none -P -K "$T/tank.key" "${dev}p2" 2>/dev/null
start=$(sgdisk -i 2 "$dev" 2>/dev/null | sed -n 's/^First sector: \([0-9]*\).*/\1/p')
sgdisk --zap-all "$dev" >/dev/null 2>&1
losetup -d "$dev"
run "$GELI" search "$T/d6"
check "search: the 4Kn disk's provider, in 4096-byte sectors" test "$rc" = 0 -a \
	"$(sed -n 's/^     start: //p' "$T/out")" = "$((start * 4096)) (sector $start of 4096 bytes)" -a \
	"$(grep -c -- '--sector-size 4096' "$T/out")" = 1
fi
# ---- docs/truenas.md, run ---------------------------------------------------------
DOC=$(cd "$(dirname "$0")/../.." && pwd)/docs/truenas.md
export PATH="$(dirname "$GELI"):$(dirname "$TRUENAS"):$PATH"
doc_all_tagged "$DOC"
if [ $have_zfs = 1 ]; then
	# Its disks: sdb..sde tank's (sde the log), sdf a copy of vault's disk
	# (its table wiped by the document), sdg an empty one for a new pool.
	cp "$T/d5" "$T/df"
	truncate -s 100M "$T/dg"
	attach_disk df
	attach_disk dg
	mkdir -p "$T/root"
	cp "$T/keys.tar" "$T/root/freenas-backup.tar"
	cp "$T/bare.db" "$T/root/freenas-v1.db"
	cp "$T/tank.key" "$T/root/pool_tank_encryption.key"
	printf 'new pool passphrase' >"$T/root/new.pass"
	map=()
	i=0
	for d in d1 d2 d3 d4 df dg; do
		l=$(echo bcdefg | cut -c$((i + 1)))
		map+=(-e "s#\\bsd$l\\([0-9]\\)\\b#$(basename "${LOOP[$d]}")p\\1#g"
			-e "s#/dev/sd$l\\b#${LOOP[$d]}#g")
		i=$((i + 1))
	done
	# The document's names made this test's: disks, /root, /dev's .eli
	# names, the pool mounted under $T/mnt.  zfs-fuse finds the providers
	# as files in the run directory (no -L), and has no native encryption
	# and no read-only import (so the attaches are read-write too).
	if [ "$ZFS_KIND" = openzfs ]; then
		kind=(-e "s#-d /dev #-d $GELI_DEVDIR #")
	else
		kind=(-e "s# -L##" -e "s#-d /dev #-d $GELI_RUNDIR #"
			-e "s#zfs recv -u -o encryption=on -o keyformat=passphrase -o keylocation=[^ ]* #zfs recv -u #"
			-e "s#zfs mount -l #zfs mount #"
			-e "s# -o readonly=on##" -e "s#geli-truenas attach -r #geli-truenas attach #"
			-e "s#geli attach -r #geli attach #")
	fi
	localize() {
		sed "${map[@]}" -e "s#/root/#$T/root/#g" \
			-e "s#zpool create newpool #zpool create -m $T/mnt/newpool newpool #" "${kind[@]}"
	}
	doc() {
		doc_block "$DOC" "$1" | localize >"$T/block.sh"
		(. "$T/block.sh") >"$T/out" 2>"$T/err" </dev/null
		rc=$?
	}
	doc list
	check "doc list: tank's four disks open with the backup's key" test "$rc" = 0 -a \
		"$(grep -c 'the key opens it (slot 0)' "$T/out")" = 4
	doc attach
	check "doc attach: tank imported" test "$rc" = 0 -a \
		"$(zpool list -H -o health tank 2>/dev/null)" = ONLINE
	check "doc attach: ... its files intact" sums_ok "$T/mnt/tank" "$T/tank.sums"
	[ "$ZFS_KIND" = openzfs ] && check "doc attach: ... read-only" test \
		"$(zpool get -H -o value readonly tank 2>/dev/null)" = on
	doc downloaded-key
	check "doc downloaded-key: imported again with the downloaded key" test "$rc" = 0 -a \
		"$(zpool list -H -o health tank 2>/dev/null)" = ONLINE
	doc no-backup
	check "doc no-backup: sgdisk shows the FreeBSD ZFS partition, geli dump the metadata" \
		grep -q 'A504' "$T/out"
	check "doc no-backup: attached by hand, imported, files intact" sums_ok "$T/mnt/tank" "$T/tank.sums"
	start=$((4224 * 512))
	doc search
	check "doc search: the provider of the wiped disk found, with its losetup line" test "$rc" = 0 -a \
		"$(grep -c "^open with: losetup --find --show --read-only --offset $start " "$T/out")" = 1
	doc send
	mnt=$(zfs get -H -o value mountpoint newpool/tank 2>/dev/null)
	check "doc send: the pool copied to a new pool and mounted, files intact" test "$rc" = 0 -a \
		-n "$mnt" && check "doc send: ... its files intact" sums_ok "$mnt" "$T/tank.sums"
	[ "$ZFS_KIND" = openzfs ] && check "doc send: ... under ZFS's encryption" test \
		"$(zfs get -H -o value encryption,keystatus newpool/tank 2>/dev/null | tr '\n' ' ')" = "aes-256-gcm available "
	[ "$rc" = 0 ] || { cat "$T/block.sh" "$T/err" | diag; }
	zpool export newpool 2>/dev/null
	zpool export tank 2>/dev/null
	detach_all
else
	skip "docs/truenas.md's blocks: need a ZFS"
fi
done_testing
