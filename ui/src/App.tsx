import { Route, Routes } from 'react-router';
import { Layout } from './components/Layout';
import { Loading } from './components/bits';
import { can, type Ability } from './permissions';
import { useSession } from './session';
import { AuditPage } from './pages/AuditPage';
import { DashboardPage } from './pages/DashboardPage';
import { DistributionsPage } from './pages/DistributionsPage';
import { DownloadsPage } from './pages/DownloadsPage';
import { ImportPage } from './pages/ImportPage';
import { LoginPage } from './pages/LoginPage';
import { PackagePage } from './pages/PackagePage';
import { PackagesPage } from './pages/PackagesPage';
import { ReviewQueuePage } from './pages/ReviewQueuePage';
import { SettingsPage } from './pages/SettingsPage';
import { TokensPage } from './pages/TokensPage';
import { UploadPage } from './pages/UploadPage';
import { UsersPage } from './pages/UsersPage';

/** A page the role may not use is not linked; typed in by hand it says so instead of failing. */
function Allowed({ ability, children }: { ability: Ability; children: React.ReactNode }) {
  const { session } = useSession();
  if (!can(session, ability)) return <p role="alert" className="notice bad">Your role ({session?.role}) does not give access to this page.</p>;
  return <>{children}</>;
}

export function App() {
  const { session, loading } = useSession();
  if (loading) return <main id="main"><Loading what="your session" /></main>;
  if (!session) return <LoginPage />;
  return (
    <Routes>
      <Route element={<Layout />}>
        <Route index element={<DashboardPage />} />
        <Route path="packages" element={<PackagesPage />} />
        <Route path="packages/:name" element={<PackagePage />} />
        <Route path="upload" element={<Allowed ability="upload"><UploadPage /></Allowed>} />
        <Route path="review" element={<Allowed ability="review_queue"><ReviewQueuePage /></Allowed>} />
        <Route path="distributions" element={<DistributionsPage />} />
        <Route path="import" element={<ImportPage />} />
        <Route path="downloads" element={<DownloadsPage />} />
        <Route path="tokens" element={<Allowed ability="api_tokens"><TokensPage /></Allowed>} />
        <Route path="users" element={<Allowed ability="manage_users"><UsersPage /></Allowed>} />
        <Route path="audit" element={<Allowed ability="audit"><AuditPage /></Allowed>} />
        <Route path="settings" element={<Allowed ability="settings"><SettingsPage /></Allowed>} />
        <Route path="*" element={<p role="alert" className="notice">No such page.</p>} />
      </Route>
    </Routes>
  );
}
