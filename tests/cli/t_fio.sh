#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Concurrent readers and writers through attach, every byte checked by fio's
# verify: 4 jobs, random block sizes from 512 bytes (partial GELI sectors,
# so read-modify-write) to 128 KiB, verifying while the others write.
. "$(dirname "$0")/lib.sh"
need_fuse || { done_testing; exit; }
if ! command -v fio >/dev/null; then skip "fio not installed"; done_testing; exit; fi

passfile "$T/pass" "fio"
# fio leaves its verify state files in the working directory: keep them in $T.
fio() { (cd "$T" && command fio "$@"); }
while read -r desc opts; do
	prov=$T/f.img
	eli=$GELI_RUNDIR/f.img.eli
	mkprov "$prov" 72M
	"$GELI" init -B none -i 500 -J "$T/pass" $opts "$prov" >/dev/null 2>&1
	"$GELI" attach -j "$T/pass" "$prov"
	# Integrity volumes are unreadable until written (and so is a partial
	# write into them): fill first, as geli(8) advises.
	dd if=/dev/zero of="$eli" bs=1M conv=notrunc status=none 2>/dev/null
	fio --name=mixed --filename="$eli" --ioengine=psync --rw=randwrite \
		--bsrange=512-128k --blockalign=512 --numjobs=4 --size=16M --offset_increment=16M \
		--verify=crc32c --verify_backlog=32 --do_verify=1 --verify_fatal=1 \
		--randrepeat=0 --group_reporting >"$T/fio.log" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && ! grep -qi "verify: bad" "$T/fio.log"; then ok "$desc: concurrent writes and verifying reads"; else
		nok "$desc: fio"; tail -20 "$T/fio.log" | diag; fi
	fio --name=reread --filename="$eli" --ioengine=psync --rw=randwrite --bsrange=512-128k \
		--blockalign=512 --numjobs=4 --size=16M --offset_increment=16M --verify=crc32c \
		--verify_only=1 --verify_fatal=1 --randrepeat=0 >"$T/fio2.log" 2>&1
	check "$desc: everything verifies again after the writers finished" test $? -eq 0
	"$GELI" detach f.img
	"$GELI" attach -j "$T/pass" "$prov"
	fio --name=reread --filename="$eli" --ioengine=psync --rw=randwrite --bsrange=512-128k \
		--blockalign=512 --numjobs=4 --size=16M --offset_increment=16M --verify=crc32c \
		--verify_only=1 --verify_fatal=1 --randrepeat=0 >"$T/fio3.log" 2>&1
	check "$desc: and after detach and attach" test $? -eq 0
	"$GELI" detach f.img
done <<'LIST'
AES-XTS-256 S=4096 -e aes-xts -l 256 -s 4096
AES-CBC-128 S=512 -e aes-cbc -s 512
HMAC/SHA256 S=4096 -a hmac/sha256 -s 4096
Blowfish HMAC/SHA1 S=1024 -e blowfish -a hmac/sha1 -s 1024
LIST
done_testing
