/* wine-idle.exe: sleeps forever so Wine's services (services.exe, winedevice,
 * svchost...) stay up between wine_node runs. Killed by wine_teardown. */
#include <windows.h>
int main(void) { Sleep(INFINITE); return 0; }
