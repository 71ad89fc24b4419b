/*
 * LD_PRELOAD shim for the VPCS test lab.
 *
 * vpcs binds its console and UDP sockets to INADDR_ANY with no option to
 * change that; tests must keep every socket on loopback, so wildcard binds
 * are rewritten to 127.0.0.1 (or ::1).
 *
 * With -DCLAMP_USLEEP, sleeps shorter than 1 ms are stretched to 10 ms: the
 * vpcs timer thread polls with usleep(100), which otherwise costs each idle
 * instance about a tenth of a CPU core. Nothing observable in the console
 * depends on that resolution.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef int (*bind_fn)(int, const struct sockaddr *, socklen_t);

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	static bind_fn real_bind;
	if (!real_bind)
		real_bind = (bind_fn)dlsym(RTLD_NEXT, "bind");

	if (addr && addr->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
		struct sockaddr_in in4;
		memcpy(&in4, addr, sizeof in4);
		if (in4.sin_addr.s_addr == htonl(INADDR_ANY)) {
			in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			return real_bind(fd, (const struct sockaddr *)&in4, sizeof in4);
		}
	}
	if (addr && addr->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
		struct sockaddr_in6 in6;
		memcpy(&in6, addr, sizeof in6);
		if (memcmp(&in6.sin6_addr, &in6addr_any, sizeof in6addr_any) == 0) {
			in6.sin6_addr = in6addr_loopback;
			return real_bind(fd, (const struct sockaddr *)&in6, sizeof in6);
		}
	}
	return real_bind(fd, addr, len);
}

#ifdef CLAMP_USLEEP
typedef int (*usleep_fn)(useconds_t);

int usleep(useconds_t usec)
{
	static usleep_fn real_usleep;
	if (!real_usleep)
		real_usleep = (usleep_fn)dlsym(RTLD_NEXT, "usleep");
	if (usec < 1000)
		usec = 10000;
	return real_usleep(usec);
}
#endif
