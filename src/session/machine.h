// Forwarding header: the client connection machine is session::ClientMachine
// (session/client_machine.h), the role-free security core session/security.h.
// Kept for code outside the session layer that still includes this name.
#pragma once

#include "session/client_machine.h"
