/* error.c - the error table (LN_ERRNO_MAP) and version information. */
#include "internal.h"

const char *ln_strerror(int err) {
    switch (err) {
    case 0:
        return "success";
#define LN_XX_(name, value, text)                                                                  \
    case value:                                                                                    \
        return text;
        LN_ERRNO_MAP(LN_XX_)
#undef LN_XX_
    default:
        return "unknown error";
    }
}

const char *ln_err_name(int err) {
    switch (err) {
    case 0:
        return "LN_OK";
#define LN_XX_(name, value, text)                                                                  \
    case value:                                                                                    \
        return "LN_" #name;
        LN_ERRNO_MAP(LN_XX_)
#undef LN_XX_
    default:
        return "LN_UNKNOWN";
    }
}

#define LN_STR_(x) #x
#define LN_XSTR_(x) LN_STR_(x)

const char *ln_version_string(void) {
    return LN_XSTR_(LN_VERSION_MAJOR) "." LN_XSTR_(LN_VERSION_MINOR) "." LN_XSTR_(LN_VERSION_PATCH);
}

unsigned ln_version(void) {
    return LN_VERSION_HEX;
}
