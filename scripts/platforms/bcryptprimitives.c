/* Minimal bcryptprimitives.dll for Wine < 9: Rust std (>= 1.78) imports
 * ProcessPrng from bcryptprimitives.dll via raw-dylib; Wine 8.0 ships no such DLL.
 * Build: x86_64-w64-mingw32-gcc -O2 -shared -o bcryptprimitives.dll bcryptprimitives.c -ladvapi32 */
#include <windows.h>

/* RtlGenRandom, exported by advapi32 as SystemFunction036 */
BOOLEAN WINAPI SystemFunction036(PVOID buf, ULONG len);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE h, DWORD reason, LPVOID reserved)
{
    (void)h; (void)reason; (void)reserved;
    return TRUE;
}
