/* SPDX-License-Identifier: BSD-2-Clause */
/* Block devices as sysfs describes them (see sysblock.h). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sysblock.h"

/* The number in file dir/name; 0 or -errno. */
static int
read_u64(const char *dir, const char *name, uint64_t *v)
{
	char f[PATH_MAX + 64];
	FILE *fp;
	int rc;

	snprintf(f, sizeof(f), "%s/%s", dir, name);
	if ((fp = fopen(f, "re")) == NULL)
		return -errno;
	rc = fscanf(fp, "%" SCNu64, v) == 1 ? 0 : -EINVAL;
	fclose(fp);
	return rc;
}

/* The last component of path into out; 0 or -ENAMETOOLONG. */
static int
base_of(const char *path, char *out, size_t len)
{
	const char *b = strrchr(path, '/');

	b = b != NULL ? b + 1 : path;
	if (strlen(b) >= len)
		return -ENAMETOOLONG;
	snprintf(out, len, "%s", b);
	return 0;
}

int
sysblock_part_of(const char *sys, dev_t dev, struct sysblock_part *out)
{
	char link[PATH_MAX], dir[PATH_MAX], *slash;
	uint64_t num;
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(link, sizeof(link), "%s/dev/block/%u:%u", sys, major(dev),
	    minor(dev));
	if (realpath(link, dir) == NULL)
		return -errno;
	if ((rc = read_u64(dir, "partition", &num)) != 0)
		return rc == -ENOENT ? -ENOTBLK : rc;
	if ((rc = read_u64(dir, "start", &out->start)) != 0 ||
	    (rc = read_u64(dir, "size", &out->size)) != 0)
		return rc;
	if (num == 0 || num > UINT_MAX)
		return -EINVAL;
	out->num = (unsigned)num;
	/* A partition's directory is in its disk's. */
	if ((slash = strrchr(dir, '/')) == NULL)
		return -EINVAL;
	*slash = '\0';
	return base_of(dir, out->disk, sizeof(out->disk));
}

int
sysblock_part_name(const char *sys, const char *disk, unsigned num, char *out,
    size_t len)
{
	char dir[PATH_MAX], sub[PATH_MAX + 256];
	struct dirent *de;
	uint64_t n;
	DIR *d;
	int rc = -ENOENT;

	snprintf(dir, sizeof(dir), "%s/block/%s", sys, disk);
	if ((d = opendir(dir)) == NULL)
		return -errno;
	while (rc == -ENOENT && (de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, disk, strlen(disk)) != 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		if (read_u64(sub, "partition", &n) == 0 && n == num)
			rc = base_of(de->d_name, out, len);
	}
	closedir(d);
	return rc;
}

int
sysblock_part_place(const char *sys, const char *disk, unsigned num,
    uint64_t *start, uint64_t *size)
{
	char name[NAME_MAX + 1], dir[PATH_MAX];
	int rc;

	if ((rc = sysblock_part_name(sys, disk, num, name, sizeof(name))) != 0)
		return rc;
	snprintf(dir, sizeof(dir), "%s/block/%s/%s", sys, disk, name);
	if ((rc = read_u64(dir, "start", start)) != 0)
		return rc;
	return read_u64(dir, "size", size);
}

int
sysblock_disk_of(const char *sys, const char *arg, char *out, size_t len)
{
	char base[NAME_MAX + 1], p[PATH_MAX], real[PATH_MAX], *slash;

	if (base_of(arg, base, sizeof(base)) != 0)
		return -ENAMETOOLONG;
	snprintf(p, sizeof(p), "%s/block/%s", sys, base);
	if (access(p, F_OK) == 0)
		return base_of(base, out, len);
	snprintf(p, sizeof(p), "%s/class/block/%s", sys, base);
	if (realpath(p, real) == NULL)
		return -ENOENT;
	if ((slash = strrchr(real, '/')) == NULL)
		return -ENOENT;
	*slash = '\0';
	return base_of(real, out, len);
}
