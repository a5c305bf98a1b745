/* Client side of the control channel (see ctl.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"
#include "geli.h"

const char *
rundir(void)
{
	const char *d = getenv("GELI_RUNDIR");

	return d != NULL && *d != '\0' ? d : "/run/geli";
}

int
rundir_path(const char *name, const char *suffix, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s%s", rundir(), name, suffix);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int
ctl_call(const char *name, const char *req, const void *key, size_t keylen,
    char *reply, size_t replylen)
{
	struct sockaddr_un sa;
	uint8_t *msg;
	size_t reqlen = strlen(req), msglen;
	ssize_t n;
	int fd, error;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (rundir_path(name, ".ctl", sa.sun_path, sizeof(sa.sun_path)) != 0)
		return -ENAMETOOLONG;
	msglen = reqlen + (key != NULL ? 1 + keylen : 0);
	if (msglen > CTL_MAX)
		return -EMSGSIZE;
	msg = geli_secure_alloc(CTL_MAX);
	if (msg == NULL)
		return -ENOMEM;
	memcpy(msg, req, reqlen);
	if (key != NULL) {
		msg[reqlen] = '\0';
		memcpy(msg + reqlen + 1, key, keylen);
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		error = -errno;
		goto out;
	}
	if (send(fd, msg, msglen, MSG_NOSIGNAL) != (ssize_t)msglen) {
		error = -errno;
		goto out;
	}
	n = recv(fd, reply, replylen - 1, 0);
	if (n <= 0) {
		error = n == 0 ? -ECONNRESET : -errno;
		goto out;
	}
	reply[n] = '\0';
	if (strncmp(reply, "OK\n", 3) == 0) {
		memmove(reply, reply + 3, (size_t)n - 2);
		error = 0;
	} else if (strncmp(reply, "ERR ", 4) == 0) {
		memmove(reply, reply + 4, (size_t)n - 3);
		error = 1;
	} else {
		error = -EPROTO;
	}
out:
	if (fd >= 0)
		close(fd);
	geli_secure_free(msg);
	return error;
}
