import { NavLink, Outlet } from 'react-router';
import { can, type Ability } from '../permissions';
import { useSession } from '../session';

const LINKS: Array<{ to: string; text: string; ability?: Ability }> = [
  { to: '/', text: 'Dashboard' },
  { to: '/packages', text: 'Packages' },
  { to: '/upload', text: 'Upload', ability: 'upload' },
  { to: '/review', text: 'Review queue', ability: 'review_queue' },
  { to: '/distributions', text: 'Distributions' },
  { to: '/import', text: 'Import' },
  { to: '/downloads', text: 'Downloads' },
  { to: '/tokens', text: 'API tokens', ability: 'api_tokens' },
  { to: '/users', text: 'Users', ability: 'manage_users' },
  { to: '/audit', text: 'Audit log', ability: 'audit' },
  { to: '/settings', text: 'Settings', ability: 'settings' },
];

export function Layout() {
  const { session, logout } = useSession();
  return (
    <div className="shell">
      <a className="skip" href="#main">Skip to content</a>
      <header className="topbar">
        <span className="brand">Tollgate</span>
        {session && (
          <span className="who">
            <span>{session.user.username} <span className="muted">({session.role})</span></span>
            <button type="button" className="secondary small" onClick={() => void logout()}>Log out</button>
          </span>
        )}
      </header>
      <nav className="sidebar" aria-label="Main">
        <ul>
          {LINKS.filter((link) => !link.ability || can(session, link.ability)).map((link) => (
            <li key={link.to}>
              <NavLink to={link.to} end={link.to === '/'}>{link.text}</NavLink>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  );
}
